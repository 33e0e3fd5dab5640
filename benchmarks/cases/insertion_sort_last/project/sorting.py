"""Simple stable sorting routines."""


def insertion_sort(items, key=None):
    key = key or (lambda x: x)
    a = list(items)
    for i in range(1, len(a) - 1):
        current = a[i]
        j = i - 1
        while j >= 0 and key(a[j]) > key(current):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = current
    return a


def is_sorted(items, key=None):
    key = key or (lambda x: x)
    return all(key(a) <= key(b) for a, b in zip(items, items[1:]))


def top_n(items, n, key=None):
    return insertion_sort(items, key)[::-1][:n]


def sort_records(records, field):
    return insertion_sort(records, key=lambda r: r[field])
