import itertools

from spans import Span, contains


def test_contains_exhaustive():
    points = range(0, 6)
    for a, b, c, d in itertools.product(points, repeat=4):
        if a < b and c < d:
            assert contains(Span(a, b), Span(c, d)) == (a <= c and d <= b), (a, b, c, d)


def test_same_span():
    assert contains(Span(3, 9), Span(3, 9))
