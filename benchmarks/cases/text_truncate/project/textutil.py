"""Text formatting helpers."""

ELLIPSIS = "\u2026"


def truncate(text, limit):
    """Shorten text to at most `limit` characters, marking a cut with an ellipsis."""
    if limit < 1:
        raise ValueError("limit must be positive")
    if len(text) <= limit:
        return text
    return text[:limit] + ELLIPSIS


def wrap(text, width):
    lines = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = word if not current else current + " " + word
    if current:
        lines.append(current)
    return lines


def initials(name):
    return "".join(part[0].upper() for part in name.split() if part)


def count_words(text):
    return len(text.split())
