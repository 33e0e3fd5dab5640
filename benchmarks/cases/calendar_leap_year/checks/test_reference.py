import calendar

from calendar_utils import day_of_year, days_in_year, is_leap


def test_matches_stdlib():
    for year in range(1582, 2500):
        assert is_leap(year) == calendar.isleap(year), year


def test_centuries():
    assert not is_leap(1900) and is_leap(2000) and not is_leap(2100)


def test_day_of_year_common():
    assert day_of_year(2023, 12, 31) == 365
    assert days_in_year(2021) == 365
