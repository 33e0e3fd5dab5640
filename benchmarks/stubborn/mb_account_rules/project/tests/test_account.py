import pytest
from account import compound, deposit, withdraw


def test_withdraw_everything():
    assert withdraw(50, 50) == 0


def test_overdraw():
    with pytest.raises(ValueError):
        withdraw(50, 60)


def test_deposit():
    assert deposit(5, 5) == 10


def test_compound_two_years():
    assert compound(100, 10, 2) == 121
