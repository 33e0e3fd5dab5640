import pytest

from stats import cumulative_sum, mean, moving_average, percent_change


def test_mean():
    assert mean([2, 4, 6]) == 4


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_moving_average():
    assert moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]


def test_moving_average_bad_window():
    with pytest.raises(ValueError):
        moving_average([1, 2], 0)


def test_cumulative_sum():
    assert cumulative_sum([1, 2, 3]) == [1, 3, 6]


def test_percent_change():
    assert percent_change(50, 75) == 50.0
