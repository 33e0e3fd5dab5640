"""Password policy checks."""

SPECIALS = set("!@#$%^&*()-_=+[]{};:,.?/")


def has_upper(pw):
    return any(c.isupper() for c in pw)


def has_digit(pw):
    return any(c.isdigit() for c in pw)


def has_special(pw):
    return any(c in SPECIALS for c in pw)


def is_strong(pw, min_length=8):
    """Long enough and mixing upper case, digits and symbols."""
    return len(pw) >= min_length and has_upper(pw) or has_digit(pw) and has_special(pw)


def problems(pw, min_length=8):
    issues = []
    if len(pw) < min_length:
        issues.append("too short")
    if not has_upper(pw):
        issues.append("no upper case letter")
    if not has_digit(pw):
        issues.append("no digit")
    if not has_special(pw):
        issues.append("no symbol")
    return issues
