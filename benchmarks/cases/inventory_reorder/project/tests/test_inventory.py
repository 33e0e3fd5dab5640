import pytest

from inventory import Inventory


def test_add_accumulates():
    inv = Inventory()
    inv.add("apple", 3)
    inv.add("apple", 4)
    assert inv.stock["apple"] == 7


def test_remove_too_much_raises():
    inv = Inventory()
    inv.add("pear", 2)
    with pytest.raises(ValueError):
        inv.remove("pear", 3)


def test_reorder_below_threshold():
    inv = Inventory()
    inv.add("nail", 2, threshold=10)
    inv.add("screw", 50, threshold=10)
    assert inv.needs_reorder() == ["nail"]


def test_reorder_at_threshold():
    inv = Inventory()
    inv.add("bolt", 20, threshold=5)
    inv.remove("bolt", 15)
    assert inv.needs_reorder() == ["bolt"]


def test_value():
    inv = Inventory()
    inv.add("a", 2)
    inv.add("b", 3)
    assert inv.value({"a": 10, "b": 1}) == 23
