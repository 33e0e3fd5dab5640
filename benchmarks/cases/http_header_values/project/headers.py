"""Parsing HTTP-style header blocks."""


def parse_headers(raw):
    """Header names are case-insensitive (stored lower-case); values keep their case."""
    headers = {}
    for line in raw.splitlines():
        if not line.strip():
            break
        name, _, value = line.partition(":")
        name = name.strip().lower()
        value = value.strip()
        value = value.lower()
        if name in headers:
            headers[name] += ", " + value
        else:
            headers[name] = value
    return headers


def get_header(headers, name, default=None):
    return headers.get(name.lower(), default)


def content_length(headers):
    value = get_header(headers, "Content-Length")
    return int(value) if value is not None else 0


def format_headers(headers):
    return "".join("%s: %s\r\n" % ("-".join(p.capitalize() for p in k.split("-")), v)
                   for k, v in sorted(headers.items()))
