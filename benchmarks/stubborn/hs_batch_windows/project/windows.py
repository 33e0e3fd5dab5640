"""Sliding windows over a series."""


def windows(xs, size):
    return [xs[i : i + size] for i in range(len(xs) - size)]


def sums(xs, size):
    return [sum(w) for w in windows(xs, size)]


def summaries(xs, size):
    out = []
    for w in windows(xs, size):
        if len(w) < size - 1:
            continue
        out.append((min(w), max(w)))
    return out


def moving_average(xs, size):
    return [s / size for s in sums(xs, size)]
