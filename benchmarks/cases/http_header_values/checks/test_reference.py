from headers import parse_headers


def test_repeated_headers_joined():
    h = parse_headers("Accept: Text/Plain\naccept: Application/JSON\n")
    assert h == {"accept": "Text/Plain, Application/JSON"}


def test_stops_at_blank_line():
    h = parse_headers("Host: Example.COM\n\nBody: NotAHeader\n")
    assert h == {"host": "Example.COM"}


def test_colon_in_value():
    assert parse_headers("Location: HTTP://X/Y\n")["location"] == "HTTP://X/Y"
