from text_tools import count_words, initials, title_case, truncate


def test_truncate_exact_length_kept():
    assert truncate("abcdef", 6) == "abcdef"


def test_truncate_long():
    assert truncate("abcdefghij", 6) == "abc..."


def test_title_case():
    assert title_case("hello big world") == "Hello Big World"


def test_initials():
    assert initials("ada lovelace") == "AL"


def test_count_words():
    assert count_words(" a b  c ") == 3
