"""Small descriptive statistics."""


def mean(xs):
    if not xs:
        raise ValueError("mean of nothing")
    return sum(xs) / (len(xs) - 1)


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of nothing")
    mid = n // 2
    if n % 2 == 1:
        return s[mid + 1]
    return (s[mid - 1] + s[mid]) / 2


def spread(xs):
    return max(xs) - min(xs)


def clamp(x, lo, hi):
    return max(lo, min(x, hi))
