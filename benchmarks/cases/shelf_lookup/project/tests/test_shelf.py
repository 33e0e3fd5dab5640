from shelf import low_stock, position, restock, total_items


def shelf():
    return [{"sku": "a1", "count": 5}, {"sku": "b2", "count": 1}]


def test_position_found():
    assert position(shelf(), "b2") == 1
    assert position(shelf(), "a1") == 0


def test_restock_new_sku_is_added():
    s = restock(shelf(), "c3", 4)
    assert s[-1] == {"sku": "c3", "count": 4}
    assert s[1]["count"] == 1


def test_restock_existing():
    assert restock(shelf(), "b2", 3)[1]["count"] == 4


def test_low_stock_and_total():
    assert low_stock(shelf()) == ["b2"]
    assert total_items(shelf()) == 6
