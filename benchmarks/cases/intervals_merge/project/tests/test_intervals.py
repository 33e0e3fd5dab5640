from intervals import contains, gaps, merge, normalize, total_length


def test_normalize_swaps_reversed():
    assert normalize((5, 2)) == (2, 5)


def test_merge_overlapping():
    assert merge([(1, 4), (2, 6), (8, 9)]) == [(1, 6), (8, 9)]


def test_merge_touching():
    assert merge([(3, 5), (1, 3)]) == [(1, 5)]


def test_total_length():
    assert total_length([(0, 2), (1, 4)]) == 4


def test_contains():
    assert contains([(0, 2), (5, 7)], 6)
    assert not contains([(0, 2), (5, 7)], 3)


def test_gaps():
    assert gaps([(0, 1), (4, 5)]) == [(1, 4)]
