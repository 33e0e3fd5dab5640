import pytest

from loans import compound_amount, monthly_payment, simple_interest


def test_simple_interest():
    assert simple_interest(1000, 0.05, 2) == pytest.approx(100)


def test_compound_monthly():
    assert compound_amount(1000, 0.12, 1) == pytest.approx(1126.825, abs=0.01)


def test_monthly_payment_zero_rate():
    assert monthly_payment(1200, 0, 12) == 100


def test_monthly_payment():
    assert monthly_payment(10000, 0.06, 12) == pytest.approx(860.66, abs=0.01)
