import itertools
import random

from chains import chain, interleaves


def oracle(a, b, merged):
    if len(a) + len(b) != len(merged):
        return False
    for picks in itertools.combinations(range(len(merged)), len(a)):
        rest = [merged[i] for i in range(len(merged)) if i not in picks]
        if [merged[i] for i in picks] == a and rest == b:
            return True
    return False


def test_random_against_oracle():
    rng = random.Random(5)
    for _ in range(300):
        a = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
        b = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
        merged = a + b
        rng.shuffle(merged)
        assert interleaves(chain(a), chain(b), chain(merged)) == oracle(a, b, merged)
