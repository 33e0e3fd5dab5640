"""Exponential backoff."""


def delay(attempt, base=1.0, cap=30.0):
    if attempt < 1:
        raise ValueError("attempts start at 1")
    return min(base * 2 ** attempt, cap)


def schedule(attempts, base=1.0, cap=30.0):
    return [delay(a, base, cap) for a in range(1, attempts + 1)]


def total_wait(attempts, base=1.0, cap=30.0):
    return sum(schedule(attempts, base, cap))
