"""Lenient parsing of numbers typed by humans."""


def parse_int(text, default=None):
    """Parse '1,234' or ' 42 ' into an int; return `default` if impossible."""
    try:
        return int(text.strip().replace(",", "").replace("_", ""))
    except (ValueError, AttributeError):
        return text


def parse_percent(text):
    text = text.strip()
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text)


def parse_bool(text):
    value = text.strip().lower()
    if value in ("1", "true", "yes", "y"):
        return True
    if value in ("0", "false", "no", "n", ""):
        return False
    raise ValueError("not a boolean: %r" % text)


def parse_int_list(text, sep=","):
    return [parse_int(part) for part in text.split(sep) if part.strip()]
