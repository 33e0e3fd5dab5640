"""Merge sort and friends."""
from functools import reduce


def merge(left, right):
    """Merge two sorted lists into a new sorted list (stable)."""
    result = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            result.append(left[i])
            i += 1
        else:
            result.append(right[j])
            j += 1
    result.extend(left[i:])
    return result


def merge_sort(items):
    if len(items) <= 1:
        return list(items)
    mid = len(items) // 2
    return merge(merge_sort(items[:mid]), merge_sort(items[mid:]))


def merge_many(lists):
    return reduce(merge, lists, [])


def is_sorted(items):
    return all(a <= b for a, b in zip(items, items[1:]))
