from markup import escape, unescape


def test_round_trip():
    for s in ["plain", "a < b && c > d", 'say "hi"', "&amp; literal", "", "<<>>"]:
        assert unescape(escape(s)) == s


def test_plain_text_unchanged():
    assert unescape("fish & chips") == "fish & chips"


def test_double_escaped_once():
    assert unescape("&amp;lt;") == "&lt;"
