from orders import line_total, loyalty_points, order_total, receipt


def test_line_total():
    assert line_total(2.5, 4) == 10.0


def test_points_are_whole():
    assert loyalty_points(57.9) == 5


def test_whole_prices():
    assert order_total([(3.0, 2), (4.0, 1)]) == 10.0


def test_cents_are_kept():
    assert order_total([(1.25, 2), (0.5, 3)]) == 4.0
    assert order_total([(0.99, 1)]) == 0.99


def test_receipt():
    assert receipt([(12.5, 2), (0.75, 4)]) == "total 28.00, 2 points"
