"""Discount tiers."""


def discount_percent(total):
    if total >= 100:
        return 10
    if total > 50:
        return 5
    return 0


def final_price(total):
    return round(total - total * discount_percent(total) / 100, 2)


def describe(total):
    pct = discount_percent(total)
    return f"{pct}% off" if pct else "no discount"
