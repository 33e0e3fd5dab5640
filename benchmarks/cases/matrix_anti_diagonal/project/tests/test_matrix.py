from matrix import anti_diagonal, diagonal, is_square, trace, transpose

M = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]


def test_is_square():
    assert is_square(M)
    assert not is_square([[1, 2]])


def test_transpose():
    assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]


def test_diagonal_and_trace():
    assert diagonal(M) == [1, 5, 9]
    assert trace(M) == 15


def test_anti_diagonal():
    assert anti_diagonal(M) == [3, 5, 7]
