"""Operations on square matrices stored as lists of rows."""


def is_square(matrix):
    return all(len(row) == len(matrix) for row in matrix)


def transpose(matrix):
    return [list(col) for col in zip(*matrix)]


def diagonal(matrix):
    return [matrix[i][i] for i in range(len(matrix))]


def anti_diagonal(matrix):
    n = len(matrix)
    return [matrix[i][n - i] for i in range(n)]


def trace(matrix):
    return sum(diagonal(matrix))


def is_magic(matrix):
    target = sum(matrix[0])
    lines = matrix + transpose(matrix) + [diagonal(matrix), anti_diagonal(matrix)]
    return is_square(matrix) and all(sum(line) == target for line in lines)
