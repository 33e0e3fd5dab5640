import pytest

from retry import backoff_delays, retry_call, should_retry


def test_backoff_delays():
    assert backoff_delays(4) == [0.5, 1.0, 2.0, 4.0]


def test_custom_base():
    assert backoff_delays(3, base=1, factor=5) == [1, 5, 25]


def test_should_retry():
    assert should_retry(503) and should_retry(429)
    assert not should_retry(404)


def test_retry_call_eventually_succeeds():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise IOError("nope")
        return "ok"

    assert retry_call(flaky, attempts=3) == "ok"


def test_retry_call_gives_up():
    with pytest.raises(ValueError):
        retry_call(lambda: int("x"), attempts=2)
