from geometry import bounding_box, box_area, inside


def test_single_point():
    assert bounding_box([(4, -2)]) == (4, -2, 4, -2)


def test_negative_coords():
    assert bounding_box([(-1, 10), (5, -3), (0, 0)]) == (-1, -3, 5, 10)


def test_all_points_inside():
    pts = [(x * 3 % 7, x * 5 % 11) for x in range(20)]
    box = bounding_box(pts)
    assert all(inside(box, p) for p in pts)
    assert box_area(box) == 6 * 10
