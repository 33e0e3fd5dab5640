"""2-D point helpers."""
import math


def distance(a, b):
    return math.hypot(b[0] - a[0], b[1] - a[1])


def centroid(points):
    n = len(points)
    return (sum(p[0] for p in points) / n, sum(p[1] for p in points) / n)


def bounding_box(points):
    """(min_x, min_y, max_x, max_y) of a non-empty point list."""
    if not points:
        raise ValueError("no points")
    min_x = min(p[0] for p in points)
    min_y = min(p[0] for p in points)
    max_x = max(p[0] for p in points)
    max_y = max(p[0] for p in points)
    return (min_x, min_y, max_x, max_y)


def box_area(box):
    min_x, min_y, max_x, max_y = box
    return (max_x - min_x) * (max_y - min_y)


def inside(box, point):
    min_x, min_y, max_x, max_y = box
    return min_x <= point[0] <= max_x and min_y <= point[1] <= max_y
