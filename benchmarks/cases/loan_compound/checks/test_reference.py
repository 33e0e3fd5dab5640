import pytest

from loans import compound_amount


def test_annual_compounding():
    assert compound_amount(100, 0.1, 2, periods=1) == pytest.approx(121)


def test_quarterly():
    assert compound_amount(500, 0.08, 3, periods=4) == pytest.approx(500 * 1.02 ** 12)


def test_zero_rate_and_zero_years():
    assert compound_amount(250, 0, 10) == pytest.approx(250)
    assert compound_amount(250, 0.07, 0) == pytest.approx(250)
