import pytest

from geometry import bounding_box, box_area, centroid, distance, inside


def test_distance():
    assert distance((0, 0), (3, 4)) == 5


def test_centroid():
    assert centroid([(0, 0), (2, 0), (1, 3)]) == (1, 1)


def test_bounding_box():
    assert bounding_box([(1, 5), (3, 7), (2, 6)]) == (1, 5, 3, 7)


def test_bounding_box_empty():
    with pytest.raises(ValueError):
        bounding_box([])


def test_box_area_and_inside():
    assert box_area((0, 0, 2, 3)) == 6
    assert inside((0, 0, 2, 3), (1, 3))
