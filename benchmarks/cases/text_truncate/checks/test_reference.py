from textutil import ELLIPSIS, truncate


def test_length_never_exceeds_limit():
    text = "abcdefghijklmnopqrstuvwxyz"
    for limit in range(1, 30):
        out = truncate(text, limit)
        assert len(out) <= limit
        assert len(out) == min(limit, len(text))


def test_exact_length_not_cut():
    assert truncate("abcde", 5) == "abcde"


def test_limit_one():
    assert truncate("abc", 1) == ELLIPSIS


def test_prefix_kept():
    assert truncate("abcdef", 4) == "abc" + ELLIPSIS
