"""Utilities for working with closed integer intervals."""


def normalize(interval):
    start, end = interval
    if start > end:
        start, end = end, start
    return (start, end)


def merge(intervals):
    """Merge overlapping or touching closed intervals."""
    ordered = sorted(normalize(iv) for iv in intervals)
    merged = []
    for start, end in ordered:
        if merged and start < merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def total_length(intervals):
    return sum(end - start for start, end in merge(intervals))


def contains(intervals, point):
    for start, end in merge(intervals):
        if start <= point <= end:
            return True
    return False


def gaps(intervals):
    merged = merge(intervals)
    result = []
    for (_, prev_end), (next_start, _) in zip(merged, merged[1:]):
        result.append((prev_end, next_start))
    return result
