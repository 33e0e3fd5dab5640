import pytest

from calendar_utils import day_of_year, days_in_month, is_leap


def test_leap_year():
    assert is_leap(2024)


def test_common_year():
    assert not is_leap(2023)


def test_days_in_month():
    assert days_in_month(2023, 4) == 30
    assert days_in_month(2024, 2) == 29


def test_bad_month():
    with pytest.raises(ValueError):
        days_in_month(2024, 13)


def test_day_of_year():
    assert day_of_year(2024, 3, 1) == 61
