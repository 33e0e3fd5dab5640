from datetime import date

from dateparse import format_long, parse_any, parse_human, parse_iso


def test_parse_iso():
    assert parse_iso("2024-02-29") == date(2024, 2, 29)


def test_parse_human():
    assert parse_human("5 Mar 2024") == date(2024, 3, 5)


def test_parse_any_iso():
    assert parse_any(" 1999-12-31 ") == date(1999, 12, 31)


def test_format_long():
    assert format_long(date(2020, 7, 4)) == "4 Jul 2020"
