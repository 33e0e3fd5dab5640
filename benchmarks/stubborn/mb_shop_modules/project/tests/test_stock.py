import pytest
from stock import available, needs_reorder, restock


def test_available():
    assert available(10, 3) == 7


def test_restock():
    assert restock(4, 6) == 10
    with pytest.raises(ValueError):
        restock(4, -1)


def test_over_reserved_is_zero():
    assert available(2, 5) == 0
