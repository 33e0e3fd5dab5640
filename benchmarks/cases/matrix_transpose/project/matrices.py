"""Small dense matrices as lists of rows."""


def shape(m):
    return (len(m), len(m[0]) if m else 0)


def transpose(m):
    """Rows become columns: an r x c matrix becomes c x r."""
    rows, cols = shape(m)
    out = [[0] * rows for _ in range(cols)]
    for i in range(cols):
        for j in range(rows):
            out[i][j] = m[i][j]
    return out


def multiply(a, b):
    rows, inner = shape(a)
    cols = shape(b)[1]
    return [[sum(a[r][k] * b[k][c] for k in range(inner)) for c in range(cols)] for r in range(rows)]


def identity(n):
    return [[1 if r == c else 0 for c in range(n)] for r in range(n)]
