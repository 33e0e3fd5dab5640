from fields import split_fields
from rows import parse_numbers, row_total


def test_numbers():
    assert parse_numbers("row,1,2,3") == [1, 2, 3]
    assert row_total("t, 4, 5") == 9


def test_split_more():
    assert split_fields("x") == ["x"]
    assert split_fields("a,,b") == ["a", "", "b"]
