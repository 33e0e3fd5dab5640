import statistics

import pytest

from spread import stdev, variance


SAMPLES = [[1, 2], [3, 3, 3], [1.5, -2.0, 7.25, 0.0], [10, 20, 30, 40, 55]]


def test_against_statistics():
    for s in SAMPLES:
        assert variance(s) == pytest.approx(statistics.variance(s))


def test_stdev():
    assert stdev([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]))


def test_non_negative():
    assert variance([-5, 5]) == 50
