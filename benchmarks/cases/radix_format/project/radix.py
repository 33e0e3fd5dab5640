"""Integers written in another base, and read back."""

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def to_base(n, base):
    """n (any int) as a string of digits in base 2..36."""
    if not 2 <= base <= 36:
        raise ValueError("base must be between 2 and 36")
    if n == 0:
        return "0"
    sign = "-" if n < 0 else ""
    n = abs(n)
    out = ""
    while n:
        n, rem = divmod(n, base)
        digit = DIGITS[rem]
        out = out + digit
    return sign + out


def from_base(text, base):
    """The int a string of digits in base 2..36 stands for."""
    text = text.strip().lower()
    sign = -1 if text.startswith("-") else 1
    value = 0
    for ch in text.lstrip("-"):
        d = DIGITS.index(ch)
        if d >= base:
            raise ValueError(f"digit {ch!r} is not valid in base {base}")
        value = value * base + d
    return sign * value


def group_digits(text, size=4, sep="_"):
    """Separators every `size` digits from the right: 11010110 → 1101_0110."""
    head = len(text) % size
    parts = [text[:head]] if head else []
    parts += [text[i : i + size] for i in range(head, len(text), size)]
    return sep.join(parts)
