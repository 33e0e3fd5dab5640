from datetime import date, timedelta

from dateparse import format_long, parse_any, parse_human


def test_round_trip_every_day_of_a_year():
    d = date(2023, 1, 1)
    while d.year == 2023:
        assert parse_human(format_long(d)) == d
        d += timedelta(days=1)


def test_long_month_names():
    assert parse_any("17 september 1999") == date(1999, 9, 17)
