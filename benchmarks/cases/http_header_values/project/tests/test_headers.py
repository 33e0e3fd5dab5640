from headers import content_length, format_headers, get_header, parse_headers


def test_names_case_insensitive():
    h = parse_headers("Content-Length: 12\n")
    assert get_header(h, "CONTENT-LENGTH") == "12"


def test_values_keep_case():
    h = parse_headers("X-Token: AbC123\nContent-Type: text/HTML\n")
    assert h["x-token"] == "AbC123"


def test_content_length_missing():
    assert content_length({}) == 0


def test_format_headers():
    assert format_headers({"content-type": "json"}) == "Content-Type: json\r\n"
