from pricing import unit_price
from stock import available, needs_reorder


def test_threshold_sweep():
    for q in range(1, 20):
        want = 85 if q >= 10 else 100
        assert unit_price(100, q) == want


def test_available_sweep():
    for on_hand in range(0, 8):
        for reserved in range(0, 8):
            assert available(on_hand, reserved) == max(0, on_hand - reserved)


def test_reorder():
    assert needs_reorder(10, 8, 3) is True
    assert needs_reorder(10, 2, 3) is False
