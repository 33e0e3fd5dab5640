from cart import line_total, receipt, subtotal, tax


def test_single_line():
    assert subtotal([{"price": 250, "qty": 2}]) == 500


def test_discount():
    assert subtotal([{"price": 250, "qty": 2, "discount": 50}]) == 400


def test_two_lines():
    assert subtotal([{"price": 100, "qty": 1}, {"price": 30, "qty": 3}]) == 190


def test_tax_and_line_total():
    assert tax(1000) == 200
    assert line_total({"price": 3, "qty": 4}) == 12


def test_empty_receipt():
    assert receipt([]) == {"subtotal": 0, "tax": 0, "total": 0}
