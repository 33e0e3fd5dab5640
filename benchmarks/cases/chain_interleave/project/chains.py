"""Linked chains of cells and whether one chain interleaves two others."""


class Cell:
    def __init__(self, value, rest=None):
        self.value = value
        self.rest = rest


def chain(values):
    head = None
    for value in reversed(values):
        head = Cell(value, head)
    return head


def to_list(cell):
    out = []
    while cell is not None:
        out.append(cell.value)
        cell = cell.rest
    return out


def interleaves(a, b, merged):
    """Whether merged is a and b shuffled together, each keeping its own order."""
    if merged is None:
        return a is None and b is None
    if a is not None and a.value == merged.value and interleaves(a.rest, b, merged.rest):
        return True
    if b is not None and b.value == merged.value and interleaves(a.rest, b.rest, merged.rest):
        return True
    return False
