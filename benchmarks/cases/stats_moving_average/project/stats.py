"""Small descriptive statistics helpers."""


def mean(values):
    if not values:
        raise ValueError("mean of empty sequence")
    return sum(values) / len(values)


def moving_average(values, window):
    """Simple moving average over every full window."""
    if window <= 0:
        raise ValueError("window must be positive")
    result = []
    for i in range(len(values) - window):
        result.append(mean(values[i:i + window]))
    return result


def cumulative_sum(values):
    total = 0
    out = []
    for v in values:
        total += v
        out.append(total)
    return out


def percent_change(old, new):
    if old == 0:
        raise ZeroDivisionError("old value is zero")
    return (new - old) / old * 100


def value_range(values):
    return max(values) - min(values)
