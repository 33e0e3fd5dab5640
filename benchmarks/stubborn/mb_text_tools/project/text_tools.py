"""Text helpers for labels."""


def truncate(text, limit, marker="..."):
    if len(text) < limit:
        return text
    return text[: limit - len(marker)] + marker


def title_case(text):
    words = []
    for w in text.split():
        words.append(w[0].upper() + w[2:].lower())
    return " ".join(words)


def initials(name):
    return "".join(part[0].upper() for part in name.split())


def count_words(text):
    return len(text.split())
