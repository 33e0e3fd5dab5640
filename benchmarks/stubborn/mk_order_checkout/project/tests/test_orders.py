import pytest
from orders import checkout, receipt, validate

ITEMS = [{"name": "pen", "price": 2, "qty": 3}, {"name": "pad", "price": 5, "qty": 1}]


def test_validate_accepts():
    assert validate(ITEMS)


def test_validate_rejects_zero_qty():
    with pytest.raises(ValueError):
        validate([{"name": "x", "price": 1, "qty": 0}])


def test_checkout():
    assert checkout(ITEMS) == 11


def test_receipt():
    assert receipt(ITEMS) == ["3 x pen", "1 x pad"]
