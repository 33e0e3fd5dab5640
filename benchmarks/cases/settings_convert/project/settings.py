"""Typed settings read from string key/value pairs (environment, .ini files)."""

TRUE_WORDS = {"1", "true", "yes", "on"}


def parse_bool(text):
    return text.strip().lower() in TRUE_WORDS


def parse_list(text):
    return [part.strip() for part in text.split(",") if part.strip()]


SCHEMA = {
    "port": (int, "8080"),
    "debug": (parse_bool, "false"),
    "hosts": (parse_list, "localhost"),
    "timeout": (float, "2.5"),
}


def load_settings(raw, schema=SCHEMA):
    """Every key of the schema, converted; a missing key takes the schema's default (a string)."""
    settings = {}
    for key, (convert, default) in schema.items():
        if key in raw:
            settings[key] = convert(raw[key])
        else:
            settings[key] = default
    return settings


def unknown_keys(raw, schema=SCHEMA):
    return sorted(key for key in raw if key not in schema)


def describe(settings):
    return ", ".join(f"{key}={settings[key]!r}" for key in sorted(settings))
