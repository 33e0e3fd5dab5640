import random

from brackets import is_balanced


def reference(text):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack


def test_random_strings():
    rng = random.Random(3)
    for _ in range(500):
        text = "".join(rng.choice("()[]{}x") for _ in range(rng.randint(0, 10)))
        assert is_balanced(text) == reference(text), text


def test_extra_closer_at_end():
    assert not is_balanced("()]")
    assert not is_balanced("}")
