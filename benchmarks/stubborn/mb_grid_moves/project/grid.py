"""A rectangular grid."""


def in_bounds(row, col, rows, cols):
    return 0 <= row < rows and 0 <= col <= cols


def neighbours(row, col, rows, cols):
    steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    return [(row + dr, col + dc) for dr, dc in steps if in_bounds(row + dr, col + dc, rows, cols)]


def manhattan(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[0])


def cells(rows, cols):
    return [(r, c) for r in range(rows) for c in range(cols)]
