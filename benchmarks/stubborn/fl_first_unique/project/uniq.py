"""Uniqueness helpers."""


def first_unique(words):
    seen = set()
    repeated = set()
    for w in words:
        if w in seen:
            repeated.add(w)
        seen.add(w)
    for w in seen:
        if w not in repeated:
            return w
    return None


def repeated_items(words):
    seen, out = set(), []
    for w in words:
        if w in seen and w not in out:
            out.append(w)
        seen.add(w)
    return out
