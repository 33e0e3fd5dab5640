import random

from matrices import multiply, transpose


def test_random_matrices():
    rng = random.Random(5)
    for _ in range(100):
        r, c = rng.randint(1, 5), rng.randint(1, 5)
        m = [[rng.randint(-9, 9) for _ in range(c)] for _ in range(r)]
        t = transpose(m)
        assert len(t) == c and all(len(row) == r for row in t)
        assert all(t[j][i] == m[i][j] for i in range(r) for j in range(c))
        assert transpose(t) == m


def test_square_not_symmetric():
    assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]
    a = [[1, 2], [3, 4]]
    assert transpose(multiply(a, a)) == multiply(transpose(a), transpose(a))
