"""Most common values."""


def counts(xs):
    out = {}
    for x in xs:
        out[x] = out.get(x, 0) + 1
    return out


def mode(xs):
    """The most common value; ties go to the one seen first."""
    tally = counts(xs)
    distinct = set(xs)
    best = None
    for x in distinct:
        if best is None or tally[x] > tally[best]:
            best = x
    return best


def is_uniform(xs):
    return len(set(xs)) <= 1
