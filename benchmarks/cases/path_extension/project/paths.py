"""File name helpers that work on plain strings."""


def basename(path):
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def extension(path):
    """Lower-case extension without the dot; '' if there is none."""
    base = basename(path)
    if "." not in base.lstrip("."):
        return ""
    return base.rsplit(".", 1)[0].lower()


def stem(path):
    base = basename(path)
    if "." not in base.lstrip("."):
        return base
    return base.rsplit(".", 1)[0]


def with_extension(path, ext):
    head = path[: len(path) - len(basename(path))]
    return head + stem(path) + "." + ext.lstrip(".")
