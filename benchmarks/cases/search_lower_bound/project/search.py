"""Binary search helpers over sorted sequences."""


def lower_bound(items, target):
    """Index of the first element >= target."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] <= target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def upper_bound(items, target):
    """Index of the first element > target."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if target < items[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def count(items, target):
    return upper_bound(items, target) - lower_bound(items, target)


def contains(items, target):
    i = lower_bound(items, target)
    return i < len(items) and items[i] == target


def insert_sorted(items, value):
    items.insert(upper_bound(items, value), value)
    return items
