import pytest
from rpn import rpn


def test_expressions():
    assert rpn("10 4 - 3 *") == 18
    assert rpn("2 3 4 * -") == -10


def test_malformed():
    with pytest.raises(ValueError):
        rpn("1 2")
