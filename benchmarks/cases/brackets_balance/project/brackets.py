"""Bracket matching for a tiny expression editor."""

PAIRS = {")": "(", "]": "[", "}": "{"}
OPENERS = set(PAIRS.values())


def is_balanced(text):
    """True when every bracket in text is closed in the right order."""
    stack = []
    for ch in text:
        if ch in OPENERS:
            stack.append(ch)
        elif ch in PAIRS:
            if stack.pop() != PAIRS[ch]:
                return False
    return not stack


def max_depth(text):
    depth = best = 0
    for ch in text:
        if ch in OPENERS:
            depth += 1
            best = max(best, depth)
        elif ch in PAIRS:
            depth -= 1
    return best


def strip_brackets(text):
    return "".join(ch for ch in text if ch not in OPENERS and ch not in PAIRS)
