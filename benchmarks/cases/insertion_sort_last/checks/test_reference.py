import random

from sorting import insertion_sort, top_n


def test_random():
    rng = random.Random(7)
    for _ in range(200):
        data = [rng.randint(0, 20) for _ in range(rng.randint(0, 12))]
        assert insertion_sort(data) == sorted(data)


def test_smallest_last():
    assert insertion_sort([5, 6, 7, 0]) == [0, 5, 6, 7]


def test_stable():
    pairs = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    assert insertion_sort(pairs, key=lambda p: p[0]) == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]


def test_top_n():
    assert top_n([4, 9, 1, 7], 2) == [9, 7]
