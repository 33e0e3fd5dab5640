from collection_utils import chunks, dedupe, flatten, group_by


def test_dedupe_plain():
    assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_dedupe_with_key():
    assert dedupe(["Apple", "pear", "apple", "PEAR"], key=str.lower) == ["Apple", "pear"]


def test_group_by():
    assert group_by([1, 2, 3, 4], lambda n: n % 2) == {1: [1, 3], 0: [2, 4]}


def test_chunks():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_flatten():
    assert flatten([[1], [], [2, 3]]) == [1, 2, 3]
