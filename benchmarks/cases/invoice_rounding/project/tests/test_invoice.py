import pytest

from invoice import format_amount, line_total, tax


def test_line_total():
    assert line_total(3, 1.25) == 3.75


def test_negative_qty():
    with pytest.raises(ValueError):
        line_total(-1, 2.0)


def test_tax():
    assert tax(100) == 20.0


def test_format_amount():
    assert format_amount(1234567.891) == "1,234,567.89"
