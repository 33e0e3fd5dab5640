from spans import Span, contains, length, shift, union_length


def test_length_and_shift():
    assert length(Span(10, 25)) == 15
    assert shift(Span(1, 2), 5) == Span(6, 7)


def test_contains_inside():
    assert contains(Span(0, 60), Span(10, 20))


def test_contains_outside():
    assert not contains(Span(0, 60), Span(50, 70))
    assert not contains(Span(10, 20), Span(0, 5))


def test_union_length():
    assert union_length([Span(0, 10), Span(5, 15), Span(20, 25)]) == 20
