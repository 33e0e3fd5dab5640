import calendar

from cal import day_of_year, is_leap, quarter


def test_leap_oracle():
    for y in range(1800, 2101):
        assert is_leap(y) == calendar.isleap(y), y


def test_quarters():
    assert [quarter(m) for m in range(1, 13)] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]


def test_day_of_year_leap():
    assert day_of_year(2024, 3, 1) == 61
