from rects import area, contains, count_inside

R = (0, 0, 4, 3)


def test_far_edges_excluded():
    assert not contains(R, (4, 1)) and not contains(R, (1, 3))


def test_tiling_counts_each_point_once():
    left, right = (0, 0, 2, 2), (2, 0, 2, 2)
    pts = [(x, y) for x in range(4) for y in range(2)]
    assert count_inside(left, pts) + count_inside(right, pts) == len(pts)
    assert count_inside((0, 0, 4, 1), pts) + count_inside((0, 1, 4, 1), pts) == len(pts)


def test_origin_inside():
    assert contains(R, (0, 0))


def test_area():
    assert area(R) == 12
