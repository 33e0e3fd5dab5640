from retry import delay


def test_sweep():
    for a in range(1, 10):
        assert delay(a, base=1.5, cap=1000) == min(1.5 * 2 ** (a - 1), 1000)
