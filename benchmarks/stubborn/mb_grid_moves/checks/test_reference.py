from grid import in_bounds, manhattan


def test_bounds_sweep():
    for r in range(-1, 5):
        for c in range(-1, 6):
            assert in_bounds(r, c, 4, 5) == (0 <= r < 4 and 0 <= c < 5)


def test_manhattan_sweep():
    pts = [(0, 0), (2, 7), (5, 1), (3, 3)]
    for a in pts:
        for b in pts:
            assert manhattan(a, b) == abs(a[0] - b[0]) + abs(a[1] - b[1])
