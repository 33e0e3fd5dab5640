from inventory import Inventory


def make():
    inv = Inventory()
    inv.add("a", 5, threshold=5)
    inv.add("b", 6, threshold=5)
    inv.add("c", 4, threshold=5)
    inv.add("d", 0)
    return inv


def test_boundaries():
    assert make().needs_reorder() == ["a", "c", "d"]


def test_zero_stock_default_threshold():
    inv = Inventory()
    inv.add("x", 1)
    inv.remove("x", 1)
    assert inv.needs_reorder() == ["x"]


def test_threshold_kept_on_restock():
    inv = Inventory()
    inv.add("y", 1, threshold=3)
    inv.add("y", 2)
    assert inv.needs_reorder() == ["y"]
    inv.add("y", 1)
    assert inv.needs_reorder() == []


def test_remove_exact():
    inv = Inventory()
    inv.add("z", 3)
    inv.remove("z", 3)
    assert inv.total_units() == 0
