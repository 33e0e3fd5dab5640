from mergesort import is_sorted, merge, merge_sort


def test_merge_left_longer():
    assert merge([5, 6, 7], [1, 2]) == [1, 2, 5, 6, 7]


def test_merge_interleaved():
    assert merge([1, 4], [2, 3, 5, 6]) == [1, 2, 3, 4, 5, 6]


def test_merge_sort():
    assert merge_sort([3, 1, 2]) == [1, 2, 3]


def test_is_sorted():
    assert is_sorted([1, 1, 2])
    assert not is_sorted([2, 1])
