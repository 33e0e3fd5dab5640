from shipping import grand_total, shipping


def test_free_at_threshold():
    assert shipping(50) == 0


def test_just_below_pays():
    assert shipping(49.5) == 5


def test_express_just_below_pays_double():
    assert grand_total(49.5, express=True) == 59.5


def test_small():
    assert shipping(10) == 5
