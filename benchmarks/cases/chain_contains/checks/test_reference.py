import random

from chains import chain, contains


def test_random_against_slices():
    rng = random.Random(5)
    for _ in range(400):
        values = [rng.randint(0, 3) for _ in range(rng.randint(0, 7))]
        run = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
        want = any(values[i:i + len(run)] == run for i in range(len(values) - len(run) + 1)) or not run
        assert contains(chain(values), chain(run)) == want
