import pytest
from retry import delay, schedule, total_wait


def test_first_delay_is_base():
    assert delay(1, base=0.5) == 0.5


def test_schedule():
    assert schedule(4) == [1, 2, 4, 8]


def test_cap():
    assert delay(20) == 30


def test_total():
    assert total_wait(3, base=2) == 14


def test_bad_attempt():
    with pytest.raises(ValueError):
        delay(0)
