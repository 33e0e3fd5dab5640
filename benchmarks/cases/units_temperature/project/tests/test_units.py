import pytest

from units import c_to_f, f_to_c, km_to_miles, miles_to_km, pace_per_km


def test_c_to_f():
    assert c_to_f(100) == 212


def test_f_to_c_boiling():
    assert f_to_c(212) == 100


def test_miles_round_trip():
    assert km_to_miles(miles_to_km(26.2)) == pytest.approx(26.2)


def test_pace():
    assert pace_per_km(1500, 5) == (5, 0)


def test_pace_zero_distance():
    with pytest.raises(ValueError):
        pace_per_km(100, 0)
