"""Sensor readings: the first few samples after power-on are noise (the warm-up)."""


def clamp(value, low, high):
    return max(low, min(high, value))


def steady_mean(samples, warmup=2):
    if len(samples) <= warmup:
        return None
    total = 0.0
    for value in samples:
        total += value
    return total / (len(samples) - warmup)


def spikes(samples, limit):
    return [i for i, value in enumerate(samples) if abs(value) > limit]


def normalised(samples, low, high):
    return [clamp(v, low, high) for v in samples]
