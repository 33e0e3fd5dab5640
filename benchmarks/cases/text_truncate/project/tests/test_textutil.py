import pytest

from textutil import count_words, initials, truncate, wrap


def test_truncate_short_text_unchanged():
    assert truncate("hello", 10) == "hello"


def test_truncate_long_text():
    assert truncate("hello world", 8) == "hello w\u2026"


def test_truncate_rejects_zero():
    with pytest.raises(ValueError):
        truncate("abc", 0)


def test_wrap():
    assert wrap("the quick brown fox", 10) == ["the quick", "brown fox"]


def test_initials():
    assert initials("ada  lovelace") == "AL"


def test_count_words():
    assert count_words(" a b  c ") == 3
