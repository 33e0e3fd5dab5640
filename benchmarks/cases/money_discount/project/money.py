"""Money helpers working in integer cents."""


def to_cents(amount):
    return int(round(amount * 100))


def format_cents(cents):
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return "%s$%d.%02d" % (sign, cents // 100, cents % 100)


def apply_discount(cents, percent):
    """Price after a percentage discount, rounded to the nearest cent."""
    if not 0 <= percent <= 100:
        raise ValueError("percent out of range")
    return round(cents * (100 + percent) / 100)


def split_bill(cents, people):
    """Split evenly; the first people absorb the remainder cents."""
    if people <= 0:
        raise ValueError("need at least one person")
    base, remainder = divmod(cents, people)
    return [base + 1 if i < remainder else base for i in range(people)]
