"""Half-open time spans [start, end) in minutes."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    start: int
    end: int


def length(span):
    return span.end - span.start


def contains(outer, inner):
    """True when inner lies entirely within outer."""
    return outer.start <= inner.start and inner.end <= outer.start


def shift(span, minutes):
    return Span(span.start + minutes, span.end + minutes)


def union_length(spans):
    total = 0
    last_end = None
    for span in sorted(spans, key=lambda s: s.start):
        lo = span.start if last_end is None else max(span.start, last_end)
        if span.end > lo:
            total += span.end - lo
            last_end = span.end if last_end is None else max(last_end, span.end)
    return total
