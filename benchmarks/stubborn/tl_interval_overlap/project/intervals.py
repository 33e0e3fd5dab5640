"""Closed integer intervals [start, end]."""


def overlaps(a, b):
    starts_before_end = a[0] < b[1]
    ends_after_start = b[0] < a[1]
    return starts_before_end and ends_after_start


def length(a):
    return a[1] - a[0] + 1


def contains(a, x):
    return a[0] <= x <= a[1]
