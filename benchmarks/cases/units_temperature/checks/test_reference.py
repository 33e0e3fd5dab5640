import pytest

from units import c_to_f, f_to_c


def test_fixed_points():
    assert f_to_c(32) == 0
    assert f_to_c(-40) == -40
    assert f_to_c(98.6) == pytest.approx(37.0)


def test_round_trip():
    for c in (-273.15, -10, 0, 21.5, 100, 451):
        assert f_to_c(c_to_f(c)) == pytest.approx(c)
