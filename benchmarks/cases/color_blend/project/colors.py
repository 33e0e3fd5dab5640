"""Colour helpers for a chart palette: RGB tuples with channels 0..255."""


def lerp(start, stop, t):
    """The value a fraction t of the way from start to stop."""
    return start + (stop - start) * t


def clamp(value, low=0, high=255):
    return max(low, min(high, value))


def blend(c1, c2, t):
    """The colour a fraction t of the way from c1 to c2."""
    return tuple(clamp(round(lerp(a, b, t))) for a, b in zip(c1, c2))


def remap(x, in_lo, in_hi, out_lo, out_hi):
    """x from the range [in_lo, in_hi] carried over to [out_lo, out_hi]."""
    t = (x - in_lo) / (in_hi - in_lo)
    return lerp(t, out_hi, out_lo)


def to_hex(color):
    return "#" + "".join(f"{clamp(c):02x}" for c in color)
