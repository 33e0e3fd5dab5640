import random

from radix import from_base, to_base


def test_round_trip_random():
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(-10**9, 10**9)
        base = rng.randint(2, 36)
        assert from_base(to_base(n, base), base) == n
        assert int(to_base(n, base), base) == n


def test_known_values():
    assert to_base(35, 36) == "z"
    assert to_base(36, 36) == "10"
    assert to_base(1024, 2) == "10000000000"
    assert to_base(-10, 10) == "-10"
