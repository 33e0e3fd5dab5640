from matrix import anti_diagonal, is_magic


def test_one_by_one():
    assert anti_diagonal([[42]]) == [42]


def test_four_by_four():
    m = [[r * 4 + c for c in range(4)] for r in range(4)]
    assert anti_diagonal(m) == [3, 6, 9, 12]


def test_magic_square():
    assert is_magic([[2, 7, 6], [9, 5, 1], [4, 3, 8]])
    assert not is_magic([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
