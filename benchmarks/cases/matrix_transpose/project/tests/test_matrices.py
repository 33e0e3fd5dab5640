from matrices import identity, multiply, shape, transpose


def test_transpose_row():
    assert transpose([[1, 2, 3]]) == [[1], [2], [3]]


def test_transpose_rectangle():
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]


def test_identity_is_symmetric():
    assert transpose(identity(3)) == identity(3)


def test_multiply_and_shape():
    assert multiply([[1, 2], [3, 4]], identity(2)) == [[1, 2], [3, 4]]
    assert shape([[1, 2, 3]]) == (1, 3)
