import pytest

from configparse import parse_config


def test_only_comments():
    assert parse_config("# a\n   # b\n\n") == {}


def test_values_with_equals():
    assert parse_config("url = a=b\n") == {"url": "a=b"}


def test_bad_line_reports_number():
    with pytest.raises(ValueError, match="line 3"):
        parse_config("a = 1\n\nnonsense\n")


def test_indented_lines():
    assert parse_config("  debug = on\n\t# x\n") == {"debug": True}
