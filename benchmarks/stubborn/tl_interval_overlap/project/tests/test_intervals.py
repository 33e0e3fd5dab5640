from intervals import contains, length, overlaps


def test_touching_either_way():
    assert overlaps((1, 3), (3, 5)) and overlaps((3, 5), (1, 3))


def test_apart():
    assert not overlaps((1, 2), (4, 5))


def test_nested():
    assert overlaps((1, 9), (3, 4))


def test_length_and_contains():
    assert length((2, 4)) == 3
    assert contains((2, 4), 4)
