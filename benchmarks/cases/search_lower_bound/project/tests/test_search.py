from search import contains, count, insert_sorted, lower_bound, upper_bound


def test_lower_bound_missing_value():
    assert lower_bound([1, 3, 5, 7], 4) == 2


def test_lower_bound_duplicates():
    assert lower_bound([1, 2, 2, 2, 3], 2) == 1


def test_upper_bound():
    assert upper_bound([1, 2, 2, 2, 3], 2) == 4


def test_contains_absent():
    assert not contains([1, 3, 5], 4)


def test_count_absent():
    assert count([1, 3, 5], 2) == 0


def test_insert_sorted():
    assert insert_sorted([1, 4, 9], 5) == [1, 4, 5, 9]
