from seats import nearly_full, row_report


def test_boundary_over_a_range():
    for free in range(0, 40):
        assert nearly_full(free) == (free <= 1)


def test_report_full_and_last_rows():
    booked = {(0, n) for n in range(1, 5)} | {(1, n) for n in range(1, 4)} | {(2, 1), (2, 2)}
    assert row_report(booked, 4) == {"A": "last seats", "B": "last seats", "C": "2 free"}
