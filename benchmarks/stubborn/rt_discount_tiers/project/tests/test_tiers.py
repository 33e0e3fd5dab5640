from tiers import describe, discount_percent, final_price


def test_tier_starts_at_fifty():
    assert discount_percent(50) == 5


def test_small_orders_pay_full():
    assert final_price(20) == 20


def test_small_order_described():
    assert describe(10) == "no discount"


def test_top_tier():
    assert final_price(200) == 180
