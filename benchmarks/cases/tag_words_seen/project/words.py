"""Tags and words, each kept once, in first-seen order."""


def unique_tags(tags):
    seen = set()
    out = []
    for tag in tags:
        if tag in seen:
            continue
        seen.add(tag)
        out.append(tag)
    return out


def unique_words(text):
    seen = set()
    out = []
    for raw in text.split():
        word = raw.lower().strip(".,;!?")
        if not word or word in seen:
            continue
        out.append(f"{len(out) + 1}. {word}")
    return out


def word_count(text):
    return len([w for w in text.split() if w.strip(".,;!?")])
