"""Linked chains of cells: building them, and finding one inside another."""


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


def starts_with(cells, prefix):
    if prefix is None:
        return True
    if cells is None:
        return False
    return cells.value == prefix.value and starts_with(cells.rest, prefix.rest)


def contains(cells, run):
    """Whether the values of run appear one after another somewhere in cells."""
    if run is None:
        return True
    if cells is None:
        return False
    return starts_with(cells, run) or contains(cells.rest, run.rest)
