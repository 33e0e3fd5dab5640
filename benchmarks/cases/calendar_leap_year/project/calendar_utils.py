"""Calendar arithmetic without the calendar module."""

DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def is_leap(year):
    return (year % 4 == 0 or year % 100 != 0) or year % 400 == 0


def days_in_month(year, month):
    if not 1 <= month <= 12:
        raise ValueError("bad month %r" % month)
    if month == 2 and is_leap(year):
        return 29
    return DAYS[month - 1]


def days_in_year(year):
    return 366 if is_leap(year) else 365


def day_of_year(year, month, day):
    if not 1 <= day <= days_in_month(year, month):
        raise ValueError("bad day %r" % day)
    return sum(days_in_month(year, m) for m in range(1, month)) + day
