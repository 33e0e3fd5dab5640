from signals import count_peaks


def brute(samples):
    return sum(1 for a, b, c in zip(samples, samples[1:], samples[2:]) if a < b > c)


def test_against_brute_force():
    series = [[], [1], [1, 2], [1, 3, 2], [0, 1, 0, 1, 0], [5, 4, 5, 4, 5, 4], [1, 2, 2, 1], [3, 1, 4, 1, 5, 9, 2, 6]]
    for s in series:
        assert count_peaks(s) == brute(s), s


def test_min_height():
    assert count_peaks([0, 2, 0, 5, 0], min_height=3) == 1
