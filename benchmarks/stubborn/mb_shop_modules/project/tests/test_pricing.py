from pricing import order_total, unit_price, with_tax


def test_bulk_at_threshold():
    assert unit_price(100, 10) == 85


def test_small_order():
    assert order_total(3, 2) == 6


def test_tax():
    assert with_tax(100, 20) == 120
