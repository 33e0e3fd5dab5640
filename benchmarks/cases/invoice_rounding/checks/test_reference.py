import pytest

from invoice import invoice_total, line_total, subtotal


def test_cents_kept():
    assert line_total(1, 0.99) == 0.99
    assert line_total(7, 0.13) == 0.91
    assert line_total(2, 4.995) == pytest.approx(9.99)


def test_subtotal():
    assert subtotal([(1, 0.99), (2, 0.01), (3, 1.11)]) == pytest.approx(4.34)


def test_invoice_total():
    assert invoice_total([(1, 9.99), (1, 0.05)]) == pytest.approx(12.05)
