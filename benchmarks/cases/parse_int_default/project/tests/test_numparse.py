import pytest

from numparse import parse_bool, parse_int, parse_percent


def test_parse_int_thousands():
    assert parse_int(" 1,234 ") == 1234


def test_parse_int_invalid_uses_default():
    assert parse_int("abc", default=0) == 0


def test_parse_percent():
    assert parse_percent("45%") == 0.45


def test_parse_bool():
    assert parse_bool("Yes") is True
    with pytest.raises(ValueError):
        parse_bool("maybe")
