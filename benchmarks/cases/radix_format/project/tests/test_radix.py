import pytest

from radix import from_base, group_digits, to_base


def test_single_digit():
    assert to_base(7, 10) == "7"
    assert to_base(0, 2) == "0"


def test_binary():
    assert to_base(6, 2) == "110"


def test_hex_negative():
    assert to_base(-255, 16) == "-ff"


def test_from_base():
    assert from_base("ff", 16) == 255
    assert from_base("-101", 2) == -5
    with pytest.raises(ValueError):
        from_base("2", 2)


def test_group_digits():
    assert group_digits("11010110") == "1101_0110"
    assert group_digits("110") == "110"
