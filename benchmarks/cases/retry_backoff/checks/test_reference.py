from retry import backoff_delays, retry_call


def test_doubling_and_cap():
    assert backoff_delays(8) == [0.5, 1, 2, 4, 8, 16, 30.0, 30.0]


def test_sleep_sequence():
    slept = []

    def always_fail():
        raise RuntimeError()

    try:
        retry_call(always_fail, attempts=4, sleep=slept.append)
    except RuntimeError:
        pass
    assert slept == [0.5, 1.0, 2.0]
