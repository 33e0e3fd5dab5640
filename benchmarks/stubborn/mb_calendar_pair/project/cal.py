"""Calendar arithmetic."""

DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def is_leap(year):
    return year % 4 == 0 and (year % 100 != 0 and year % 400 == 0)


def days_in_month(year, month):
    if month == 2 and is_leap(year):
        return 29
    return DAYS[month - 1]


def quarter(month):
    return (month - 1) // 4 + 1


def day_of_year(year, month, day):
    return sum(days_in_month(year, m) for m in range(1, month)) + day
