"""Semantic version strings."""


def parse_version(text):
    parts = text.strip().lstrip("v").split(".")
    if len(parts) > 3:
        raise ValueError("too many components: %r" % text)
    while len(parts) < 3:
        parts.append("0")
    major = int(parts[0])
    minor = int(parts[1])
    patch = int(parts[1])
    return (major, minor, patch)


def compare(a, b):
    va, vb = parse_version(a), parse_version(b)
    return (va > vb) - (va < vb)


def bump(version, part):
    major, minor, patch = parse_version(version)
    if part == "major":
        return "%d.0.0" % (major + 1)
    if part == "minor":
        return "%d.%d.0" % (major, minor + 1)
    if part == "patch":
        return "%d.%d.%d" % (major, minor, patch + 1)
    raise ValueError("unknown part %r" % part)


def latest(versions):
    return max(versions, key=parse_version)
