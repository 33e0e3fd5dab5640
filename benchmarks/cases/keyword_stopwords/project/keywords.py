"""Naive keyword extraction."""
import re
from collections import Counter

STOPWORDS = {"a", "an", "and", "the", "of", "to", "in", "is", "it", "on", "for", "with"}


def tokenize(text):
    return re.findall(r"[a-z0-9']+", text.lower())


def is_stopword(word):
    return word in STOPWORDS or len(word) < 2 or word.isdigit()


def keywords(text):
    return [w for w in tokenize(text) if is_stopword(w)]


def top_keywords(text, n=3):
    counts = Counter(keywords(text))
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
