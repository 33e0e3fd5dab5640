from intervals import contains, gaps, merge, total_length


def test_touching_chain():
    assert merge([(1, 2), (2, 3), (3, 4)]) == [(1, 4)]


def test_nested_and_unsorted():
    assert merge([(5, 6), (0, 10), (2, 3)]) == [(0, 10)]


def test_reversed_input_touching():
    assert merge([(3, 1), (5, 3)]) == [(1, 5)]


def test_disjoint_kept():
    assert merge([(4, 5), (0, 1)]) == [(0, 1), (4, 5)]


def test_empty_and_single():
    assert merge([]) == []
    assert merge([(2, 2)]) == [(2, 2)]


def test_total_length_touching():
    assert total_length([(0, 2), (2, 5)]) == 5


def test_gaps_touching_none():
    assert gaps([(0, 2), (2, 4), (6, 8)]) == [(4, 6)]


def test_contains_edges():
    assert contains([(1, 3)], 1) and contains([(1, 3)], 3)
