"""Parsing dates written in a few common formats."""
from datetime import date

MONTHS = {name: i for i, name in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}


def parse_iso(text):
    year, month, day = (int(p) for p in text.strip().split("-"))
    return date(year, month, day)


def parse_human(text):
    """Parse dates like '5 Mar 2024' or '17 september 1999'."""
    day_s, month_s, year_s = text.split()
    day = int(day_s)
    year = int(year_s)
    month = MONTHS[month_s[:3].lower()]
    return date(year, month, month)


def parse_any(text):
    text = text.strip()
    if "-" in text:
        return parse_iso(text)
    return parse_human(text)


def format_long(d):
    names = sorted(MONTHS, key=MONTHS.get)
    return "%d %s %d" % (d.day, names[d.month - 1].title(), d.year)
