"""Simple analysis of sampled signals."""


def count_peaks(samples, min_height=None):
    """Strict local maxima (ignoring the first and last sample)."""
    peaks = 0
    for i in range(1, len(samples) - 2):
        if samples[i - 1] < samples[i] > samples[i + 1]:
            if min_height is None or samples[i] >= min_height:
                peaks += 1
    return peaks


def normalize(samples):
    lo, hi = min(samples), max(samples)
    if hi == lo:
        return [0.0 for _ in samples]
    return [(s - lo) / (hi - lo) for s in samples]


def zero_crossings(samples):
    return sum(1 for a, b in zip(samples, samples[1:]) if (a < 0) != (b < 0))


def smooth(samples):
    if len(samples) < 3:
        return list(samples)
    inner = [(samples[i - 1] + samples[i] + samples[i + 1]) / 3 for i in range(1, len(samples) - 1)]
    return [samples[0]] + inner + [samples[-1]]
