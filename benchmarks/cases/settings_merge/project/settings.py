"""Layered application settings."""

DEFAULTS = {"theme": "light", "page_size": 20, "language": "en"}


def merge_settings(defaults, overrides):
    """Defaults updated by overrides; None in overrides means 'keep default'."""
    merged = dict(defaults)
    for key, value in overrides.items():
        if value is not None:
            merged[key] = value
    return overrides


def diff_settings(old, new):
    changed = {}
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            changed[key] = (old.get(key), new.get(key))
    return changed


def unknown_keys(settings, known=DEFAULTS):
    return sorted(k for k in settings if k not in known)


def effective(user_settings):
    return merge_settings(DEFAULTS, user_settings)
