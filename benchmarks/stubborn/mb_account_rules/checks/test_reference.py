import pytest
from account import compound, withdraw


def test_withdraw_sweep():
    for amount in range(1, 11):
        assert withdraw(10, amount) == 10 - amount
    with pytest.raises(ValueError):
        withdraw(10, 11)


def test_compound_zero_years():
    assert compound(100, 10, 0) == 100
    assert compound(200, 50, 1) == 300
