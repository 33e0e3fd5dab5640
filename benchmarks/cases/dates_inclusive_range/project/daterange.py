"""Calendar helpers built on the datetime module."""
from datetime import date, timedelta


def days_between(start, end):
    return (end - start).days


def date_range(start, end):
    """All dates from start to end, both inclusive."""
    if end < start:
        return []
    return [start + timedelta(days=offset) for offset in range(days_between(start, end))]


def is_weekend(day):
    return day.weekday() >= 5


def business_days(start, end):
    return [d for d in date_range(start, end) if not is_weekend(d)]


def month_end(day):
    if day.month == 12:
        return date(day.year, 12, 31)
    return date(day.year, day.month + 1, 1) - timedelta(days=1)
