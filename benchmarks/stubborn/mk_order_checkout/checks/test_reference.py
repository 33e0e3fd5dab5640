import pytest
from orders import checkout, total, validate


def test_negative_price_rejected():
    with pytest.raises(ValueError):
        validate([{"name": "x", "price": -1, "qty": 1}])


def test_free_item_ok():
    assert validate([{"name": "x", "price": 0, "qty": 1}])


def test_totals():
    assert total([{"name": "a", "price": 4, "qty": 2}]) == 8
    assert checkout([{"name": "a", "price": 1, "qty": 1}] * 4) == 4
