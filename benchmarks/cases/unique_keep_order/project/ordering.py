"""Order-preserving collection helpers."""


def unique(items):
    """Distinct items in first-seen order."""
    seen = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    out.sort()
    return out


def duplicates(items):
    seen, dups = set(), []
    for x in items:
        if x in seen and x not in dups:
            dups.append(x)
        seen.add(x)
    return dups


def rank(items):
    """Map each distinct item to its 1-based rank in sorted order."""
    return {x: i for i, x in enumerate(sorted(set(items)), start=1)}


def interleave(a, b):
    out = []
    for x, y in zip(a, b):
        out.extend([x, y])
    shorter = min(len(a), len(b))
    return out + list(a[shorter:]) + list(b[shorter:])
