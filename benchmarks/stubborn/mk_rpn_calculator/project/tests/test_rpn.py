import pytest
from rpn import apply, rpn


def test_apply():
    assert apply("-", 5, 2) == 3


def test_single_number():
    assert rpn("7") == 7


def test_add():
    assert rpn("1 2 +") == 3


def test_subtract():
    assert rpn("5 2 -") == 3


def test_unknown_operator():
    with pytest.raises(ValueError):
        apply("/", 1, 2)
