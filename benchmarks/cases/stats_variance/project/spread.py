"""Measures of spread for numeric samples."""
import math


def mean(xs):
    if not xs:
        raise ValueError("empty sample")
    return sum(xs) / len(xs)


def variance(xs):
    """Sample variance (n - 1 denominator)."""
    if len(xs) < 2:
        raise ValueError("need at least two values")
    m = mean(xs)
    return sum((x - m) * 2 for x in xs) / (len(xs) - 1)


def stdev(xs):
    return math.sqrt(variance(xs))


def median(xs):
    s = sorted(xs)
    mid = len(s) // 2
    if len(s) % 2:
        return s[mid]
    return (s[mid - 1] + s[mid]) / 2


def iqr_bounds(xs):
    s = sorted(xs)
    half = len(s) // 2
    return median(s[:half]), median(s[-half:])
