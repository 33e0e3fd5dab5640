from columns import field, header, parse_row, row


def test_field_short():
    assert field("ab") == "ab      "


def test_row():
    assert row(["ab", 7]) == "ab      7       "


def test_parse_row():
    assert parse_row("ab      cd      ") == ["ab", "cd"]
