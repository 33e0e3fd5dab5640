from datetime import date

from daterange import business_days, date_range


def test_single_day():
    assert date_range(date(2024, 5, 5), date(2024, 5, 5)) == [date(2024, 5, 5)]


def test_full_week_business_days():
    assert len(business_days(date(2024, 6, 3), date(2024, 6, 9))) == 5


def test_business_days_ending_friday():
    days = business_days(date(2024, 6, 3), date(2024, 6, 7))
    assert days[-1] == date(2024, 6, 7)
    assert len(days) == 5


def test_year_length():
    assert len(date_range(date(2024, 1, 1), date(2024, 12, 31))) == 366
