from columns import field, format_record, parse_file, parse_record


def test_first_and_last_columns():
    assert field("HELLO", 1, 1) == "H"
    assert field("HELLO", 5, 5) == "O"
    assert field("HELLO", 1, 5) == "HELLO"


def test_round_trip():
    rec = {"id": "0042", "name": "washer", "qty": 300}
    assert parse_record(format_record(rec)) == rec


def test_parse_file():
    text = "1   nut       5   \n2   gear      17  \n"
    assert parse_file(text) == [{"id": "1", "name": "nut", "qty": 5}, {"id": "2", "name": "gear", "qty": 17}]
