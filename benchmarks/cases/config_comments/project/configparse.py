"""Parser for simple `key = value` configuration files."""

TRUE = ("true", "yes", "on")
FALSE = ("false", "no", "off")


def coerce(value):
    lowered = value.lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value.strip('"')


def parse_config(text):
    """Parse `key = value` lines, ignoring blank lines and # comments."""
    config = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError("line %d: expected key = value" % number)
        key, value = line.split("=", 1)
        config[key.strip()] = coerce(value.strip())
    return config
