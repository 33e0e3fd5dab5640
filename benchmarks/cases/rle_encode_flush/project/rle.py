"""Run-length encoding of strings."""
import re


def encode(text):
    """'aaab' -> [('a', 3), ('b', 1)]"""
    if not text:
        return []
    runs = []
    prev, count = text[0], 1
    for ch in text[1:]:
        if ch == prev:
            count += 1
        else:
            runs.append((prev, count))
            prev, count = ch, 1
    return runs


def decode(runs):
    return "".join(ch * n for ch, n in runs)


def to_string(runs):
    return "".join("%d%s" % (n, ch) for ch, n in runs)


def from_string(s):
    return [(ch, int(n)) for n, ch in re.findall(r"(\d+)(\D)", s)]
