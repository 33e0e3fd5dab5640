from stats import moving_average


def test_window_equals_length():
    assert moving_average([2, 4, 6], 3) == [4.0]


def test_window_one_is_identity():
    assert moving_average([5, 7, 9], 1) == [5, 7, 9]


def test_window_longer_than_data():
    assert moving_average([1, 2], 3) == []


def test_length():
    data = list(range(10))
    assert len(moving_average(data, 4)) == 7
    assert moving_average(data, 4)[-1] == 7.5
