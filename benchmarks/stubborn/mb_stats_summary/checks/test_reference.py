import random

import pytest
from stats import mean, median


def test_mean_random():
    rng = random.Random(7)
    for _ in range(50):
        xs = [rng.randint(-50, 50) for _ in range(rng.randint(1, 9))]
        assert mean(xs) == pytest.approx(sum(xs) / len(xs))


def test_median_random():
    rng = random.Random(8)
    for _ in range(50):
        xs = [rng.randint(-50, 50) for _ in range(rng.randint(1, 9))]
        s = sorted(xs)
        n = len(s)
        want = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
        assert median(xs) == want


def test_single():
    assert mean([5]) == 5
    assert median([5]) == 5
