import random

from sensor import steady_mean


def test_against_oracle():
    rng = random.Random(3)
    for _ in range(200):
        warmup = rng.randint(0, 4)
        samples = [float(rng.randint(-50, 50)) for _ in range(rng.randint(0, 9))]
        want = None if len(samples) <= warmup else sum(samples[warmup:]) / (len(samples) - warmup)
        got = steady_mean(samples, warmup)
        assert (got is None and want is None) or abs(got - want) < 1e-9
