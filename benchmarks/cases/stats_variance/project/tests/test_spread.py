import pytest

from spread import iqr_bounds, mean, median, variance


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_variance_needs_two():
    with pytest.raises(ValueError):
        variance([1])


def test_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(32 / 7)


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5


def test_iqr_bounds():
    assert iqr_bounds([1, 2, 3, 4, 5, 6, 7, 8]) == (2.5, 6.5)
