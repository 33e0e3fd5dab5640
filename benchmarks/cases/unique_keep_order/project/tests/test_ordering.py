from ordering import duplicates, interleave, rank, unique


def test_unique_sorted_input():
    assert unique([1, 1, 2, 3, 3]) == [1, 2, 3]


def test_unique_keeps_first_seen_order():
    assert unique(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_duplicates():
    assert duplicates([1, 2, 1, 3, 2, 1]) == [1, 2]


def test_rank():
    assert rank([30, 10, 20, 10]) == {10: 1, 20: 2, 30: 3}


def test_interleave():
    assert interleave([1, 2, 3], ["a"]) == [1, "a", 2, 3]
