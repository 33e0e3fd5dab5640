import pytest

from warehouse import Warehouse


def test_receive():
    w = Warehouse()
    w.receive("widget", 5)
    assert w.levels == {"widget": 5}


def test_ship_reduces_stock():
    w = Warehouse()
    w.receive("widget", 5)
    w.ship("widget", 2)
    assert w.levels["widget"] == 3


def test_ship_too_many():
    w = Warehouse()
    with pytest.raises(ValueError):
        w.ship("widget", 1)


def test_history():
    w = Warehouse()
    w.receive("gear", 10)
    w.ship("gear", 4)
    assert w.history("gear") == [("receive", 10), ("ship", 4)]
