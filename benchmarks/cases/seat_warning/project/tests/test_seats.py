from seats import free_in_row, nearly_full, row_report, seat_label


def test_seat_label():
    assert seat_label(0, 3) == "A3"
    assert seat_label(7, 12) == "H12"


def test_free_in_row():
    assert free_in_row({(0, 1), (0, 2), (1, 1)}, 0, 4) == 2


def test_sold_out_row_is_nearly_full():
    assert nearly_full(0)


def test_one_seat_left_is_nearly_full():
    assert nearly_full(1)


def test_plenty_left_is_not():
    assert not nearly_full(3)


def test_report():
    booked = {(1, 1), (1, 2), (1, 3), (2, 1), (3, 2), (3, 3)}
    assert row_report(booked, 4) == {"B": "last seats", "C": "3 free", "D": "2 free"}
