from shelf import position, restock


def test_missing_sku_is_none():
    assert position([{"sku": "a", "count": 1}], "z") is None
    assert position([{"sku": "a", "count": 1}, {"sku": "b", "count": 1}], "z") is None


def test_restock_missing_keeps_others():
    s = restock([{"sku": "a", "count": 1}, {"sku": "b", "count": 2}], "z", 7)
    assert s == [{"sku": "a", "count": 1}, {"sku": "b", "count": 2}, {"sku": "z", "count": 7}]
