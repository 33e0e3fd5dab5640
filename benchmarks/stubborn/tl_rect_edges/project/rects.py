"""Axis-aligned rectangles (x, y, w, h), half-open: [x, x + w) x [y, y + h)."""


def contains(rect, point):
    x, y, w, h = rect
    px, py = point
    inside_x = x <= px <= x + w
    inside_y = y <= py <= y + h
    return inside_x and inside_y


def area(rect):
    return rect[2] * rect[3]


def count_inside(rect, points):
    return sum(1 for p in points if contains(rect, p))
