import bisect

from search import contains, count, lower_bound


DATA = [0, 1, 1, 3, 3, 3, 8, 9, 9]


def test_lower_bound_matches_bisect():
    for t in range(-1, 11):
        assert lower_bound(DATA, t) == bisect.bisect_left(DATA, t), t


def test_contains_all():
    for t in range(-1, 11):
        assert contains(DATA, t) == (t in DATA)


def test_count_all():
    for t in range(-1, 11):
        assert count(DATA, t) == DATA.count(t)


def test_empty():
    assert lower_bound([], 3) == 0
    assert not contains([], 3)
