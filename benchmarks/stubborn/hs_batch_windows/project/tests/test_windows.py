from windows import moving_average, sums, summaries, windows


def test_windows():
    assert windows([1, 2, 3, 4], 2) == [[1, 2], [2, 3], [3, 4]]


def test_sums():
    assert sums([1, 2, 3], 3) == [6]


def test_summaries():
    assert summaries([3, 1, 2], 2) == [(1, 3), (1, 2)]


def test_average():
    assert moving_average([2, 4, 6, 8], 2) == [3, 5, 7]


def test_too_short():
    assert windows([1], 2) == []
