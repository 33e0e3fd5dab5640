from numparse import parse_int, parse_int_list


def test_none_input():
    assert parse_int(None, default=-1) == -1


def test_default_is_none():
    assert parse_int("12.5") is None


def test_list_with_junk():
    assert parse_int_list("1, 2, x, 4") == [1, 2, None, 4]


def test_underscores():
    assert parse_int("1_000") == 1000
