"""Luhn (mod 10) checksums for card and account numbers."""


def digits_of(number):
    return [int(c) for c in str(number) if c.isdigit()]


def luhn_checksum(number):
    total = 0
    for i, d in enumerate(reversed(digits_of(number))):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 8
        total += d
    return total % 10


def is_valid(number):
    return len(digits_of(number)) > 1 and luhn_checksum(number) == 0


def check_digit(partial):
    """The digit that makes `partial` followed by it Luhn-valid."""
    return (10 - luhn_checksum(str(partial) + "0")) % 10


def mask(number, visible=4):
    digits = "".join(str(d) for d in digits_of(number))
    return "*" * (len(digits) - visible) + digits[-visible:]
