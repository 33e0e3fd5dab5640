from grid import cells, in_bounds, manhattan, neighbours


def test_corner_neighbours():
    assert sorted(neighbours(0, 2, 3, 3)) == [(0, 1), (1, 2)]


def test_inside():
    assert in_bounds(1, 1, 3, 3)


def test_manhattan():
    assert manhattan((1, 5), (4, 1)) == 7


def test_cells():
    assert len(cells(2, 3)) == 6
