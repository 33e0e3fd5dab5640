import random

from mergesort import merge, merge_many, merge_sort


def test_random_sorts():
    rng = random.Random(1234)
    for _ in range(200):
        data = [rng.randint(-50, 50) for _ in range(rng.randint(0, 30))]
        assert merge_sort(data) == sorted(data)


def test_merge_with_empty():
    assert merge([], [1, 2]) == [1, 2]
    assert merge([1, 2], []) == [1, 2]


def test_merge_many():
    assert merge_many([[3, 9], [1], [2, 10, 11]]) == [1, 2, 3, 9, 10, 11]
