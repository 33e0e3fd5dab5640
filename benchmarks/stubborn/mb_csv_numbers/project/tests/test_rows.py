from rows import label, parse_numbers


def test_label():
    assert label("apples, 1, 2") == "apples"


def test_blank_row():
    assert parse_numbers("") == []


def test_parse_row():
    assert parse_numbers("row, 1, 2") == [1, 2]
