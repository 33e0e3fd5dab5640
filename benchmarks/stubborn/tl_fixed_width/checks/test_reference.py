from columns import field, parse_row, row


def test_widths():
    for w in range(2, 10):
        for text in ("", "a", "abc", "abcdefghijk"):
            out = field(text, w)
            assert len(out) == w
            assert out == (text + " " * w)[:w]


def test_round_trip():
    vals = ["a", "bb", "ccc"]
    assert parse_row(row(vals)) == vals
