from signals import count_peaks, normalize, smooth, zero_crossings


def test_no_peaks_monotonic():
    assert count_peaks([1, 2, 3, 4]) == 0


def test_two_peaks():
    assert count_peaks([0, 3, 1, 4, 2]) == 2


def test_normalize():
    assert normalize([2, 4, 6]) == [0.0, 0.5, 1.0]


def test_zero_crossings():
    assert zero_crossings([1, -1, -2, 3]) == 2


def test_smooth():
    assert smooth([0, 3, 0, 3]) == [0, 1.0, 2.0, 3]
