from datetime import date

from daterange import business_days, date_range, days_between, is_weekend, month_end


def test_days_between():
    assert days_between(date(2024, 1, 30), date(2024, 2, 2)) == 3


def test_date_range_reversed_is_empty():
    assert date_range(date(2024, 3, 2), date(2024, 3, 1)) == []


def test_date_range_includes_end():
    assert date_range(date(2024, 2, 28), date(2024, 3, 1)) == [
        date(2024, 2, 28), date(2024, 2, 29), date(2024, 3, 1)]


def test_is_weekend():
    assert is_weekend(date(2024, 6, 1))
    assert not is_weekend(date(2024, 6, 3))


def test_month_end():
    assert month_end(date(2023, 2, 10)) == date(2023, 2, 28)
    assert month_end(date(2023, 12, 5)) == date(2023, 12, 31)
