import pytest

from money import apply_discount, format_cents, split_bill, to_cents


def test_to_cents():
    assert to_cents(12.34) == 1234


def test_format_cents():
    assert format_cents(-1205) == "-$12.05"


def test_discount_zero():
    assert apply_discount(1999, 0) == 1999


def test_discount_quarter():
    assert apply_discount(1000, 25) == 750


def test_discount_out_of_range():
    with pytest.raises(ValueError):
        apply_discount(100, 120)


def test_split_bill():
    assert split_bill(1000, 3) == [334, 333, 333]
