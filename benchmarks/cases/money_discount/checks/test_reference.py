from money import apply_discount


def test_full_discount():
    assert apply_discount(4321, 100) == 0


def test_various():
    assert apply_discount(1999, 10) == 1799
    assert apply_discount(200, 50) == 100
    assert apply_discount(1, 0) == 1


def test_never_increases():
    for pct in range(0, 101, 7):
        assert apply_discount(10000, pct) == 10000 - 100 * pct
