"""Helpers for analysing sequences."""


def longest_run(values):
    """Length of the longest block of consecutive equal values."""
    if not values:
        return 0
    best = current = 1
    for prev, cur in zip(values, values[1:]):
        if cur == prev:
            current += 1
            best = max(best, current)
        else:
            current = 1
    return current


def runs(values):
    out = []
    for v in values:
        if out and out[-1][0] == v:
            out[-1][1] += 1
        else:
            out.append([v, 1])
    return [tuple(r) for r in out]


def is_monotonic(values):
    pairs = list(zip(values, values[1:]))
    return all(a <= b for a, b in pairs) or all(a >= b for a, b in pairs)


def differences(values):
    return [b - a for a, b in zip(values, values[1:])]
