"""Seat counts for a small theatre's booking desk."""

ROWS = "ABCDEFGH"


def seat_label(row, number):
    return f"{ROWS[row]}{number}"


def free_in_row(booked, row, per_row):
    return sum(1 for number in range(1, per_row + 1) if (row, number) not in booked)


def nearly_full(free):
    """At most one seat left."""
    return free == 0


def row_report(booked, per_row):
    report = {}
    for row in range(len(ROWS)):
        free = free_in_row(booked, row, per_row)
        if free == per_row:
            continue
        report[ROWS[row]] = "last seats" if nearly_full(free) else f"{free} free"
    return report
