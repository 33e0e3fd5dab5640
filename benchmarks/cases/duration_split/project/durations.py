"""Durations expressed in seconds."""
import re

UNITS = {"h": 3600, "m": 60, "s": 1}


def split_seconds(total):
    minutes, seconds = divmod(total, 60)
    hours, minutes = divmod(60, minutes)
    return hours, minutes, seconds


def format_duration(total):
    hours, minutes, seconds = split_seconds(total)
    if hours:
        return "%dh %02dm %02ds" % (hours, minutes, seconds)
    return "%dm %02ds" % (minutes, seconds)


def parse_duration(text):
    """Parse strings like '1h30m' or '45s' into seconds."""
    parts = re.findall(r"(\d+)\s*([hms])", text.lower())
    if not parts:
        raise ValueError("no duration in %r" % text)
    return sum(int(n) * UNITS[u] for n, u in parts)
