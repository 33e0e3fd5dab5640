"""Minimal HTML text helpers."""
import re

ESCAPES = [("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;")]


def escape(text):
    for raw, entity in ESCAPES:
        text = text.replace(raw, entity)
    return text


def unescape(text):
    for raw, entity in reversed(ESCAPES):
        text = text.replace(raw, entity)
    return text


def strip_tags(html):
    return re.sub(r"<[^>]*>", "", html)


def slugify(text):
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)
