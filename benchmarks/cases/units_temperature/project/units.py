"""Unit conversion helpers."""

KM_PER_MILE = 1.609344


def c_to_f(c):
    return c * 9 / 5 + 32


def f_to_c(f):
    return (f + 32) * 5 / 9


def km_to_miles(km):
    return km / KM_PER_MILE


def miles_to_km(miles):
    return miles * KM_PER_MILE


def pace_per_km(total_seconds, km):
    """Pace as (minutes, seconds) per kilometre."""
    if km <= 0:
        raise ValueError("distance must be positive")
    per_km = round(total_seconds / km)
    return divmod(per_km, 60)
