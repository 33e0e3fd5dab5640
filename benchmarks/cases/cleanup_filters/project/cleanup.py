"""Selecting which files in a directory listing to keep."""

TEMP_SUFFIXES = ("~", ".tmp", ".swp")


def is_hidden(name):
    return name.startswith(".")


def is_temp(name):
    return name.endswith(TEMP_SUFFIXES)


def keep(name, include_hidden=False, include_temp=False):
    if is_temp(name) and include_temp:
        return False
    if is_hidden(name) and include_hidden:
        return False
    return True


def filter_names(names, **flags):
    return [n for n in names if keep(n, **flags)]


def human_size(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return "%d %s" % (n, unit) if unit == "B" else "%.1f %s" % (n, unit)
        n /= 1024
    return "%.1f TB" % n
