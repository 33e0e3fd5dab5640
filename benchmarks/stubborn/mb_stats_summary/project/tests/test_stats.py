from stats import clamp, mean, median, spread


def test_mean():
    assert mean([2, 4, 6]) == 4


def test_median_odd():
    assert median([5, 1, 3]) == 3


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5


def test_spread():
    assert spread([3, 9, 4]) == 6


def test_clamp():
    assert clamp(12, 0, 10) == 10
    assert clamp(-1, 0, 10) == 0
