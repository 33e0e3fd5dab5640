from columns import field, format_record


def test_field_middle():
    assert field("ABCDEFG", 2, 4) == "BCD"


def test_field_strips():
    assert field("  x  ", 1, 5) == "x"


def test_format_record():
    rec = {"id": "7", "name": "bolt", "qty": 12}
    assert format_record(rec) == "7   bolt      12  "
