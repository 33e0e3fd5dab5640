"""Helpers for plain Python collections."""


def dedupe(items, key=None):
    """Drop later items whose key was already seen, keeping order."""
    seen = set()
    result = []
    for item in items:
        marker = item if key is None else key(item)
        if marker in seen:
            continue
        seen.add(item)
        result.append(item)
    return result


def group_by(items, key):
    groups = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def chunks(items, size):
    if size <= 0:
        raise ValueError("size must be positive")
    return [items[i:i + size] for i in range(0, len(items), size)]


def flatten(nested):
    return [x for sub in nested for x in sub]
