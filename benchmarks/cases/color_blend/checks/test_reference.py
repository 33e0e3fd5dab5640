import random

from colors import remap


def test_remap_random():
    rng = random.Random(9)
    for _ in range(200):
        in_lo, in_hi = sorted(rng.sample(range(-100, 100), 2))
        out_lo, out_hi = rng.uniform(-50, 50), rng.uniform(-50, 50)
        x = rng.uniform(in_lo, in_hi)
        expected = out_lo + (x - in_lo) / (in_hi - in_lo) * (out_hi - out_lo)
        assert abs(remap(x, in_lo, in_hi, out_lo, out_hi) - expected) < 1e-9


def test_remap_ends():
    assert remap(0, 0, 4, 10, 30) == 10
    assert remap(4, 0, 4, 10, 30) == 30
