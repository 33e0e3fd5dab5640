"""Prices with a bulk discount."""

BULK_THRESHOLD = 10
BULK_PERCENT = 15


def unit_price(base, qty):
    if qty > BULK_THRESHOLD:
        return base * (100 - BULK_PERCENT) / 100
    return base


def order_total(base, qty):
    return round(unit_price(base, qty) * qty, 2)


def with_tax(amount, percent):
    return round(amount * (100 + percent) / 100, 2)
