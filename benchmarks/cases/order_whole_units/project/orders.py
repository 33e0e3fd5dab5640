"""Order totals and the loyalty points they earn."""


def whole(amount):
    """Whole units of an amount (points are never fractional)."""
    return int(amount)


def line_total(price, quantity):
    return price * quantity


def order_total(lines):
    total = 0.0
    for price, quantity in lines:
        total += whole(line_total(price, quantity))
    return round(total, 2)


def loyalty_points(total):
    return whole(total / 10)


def receipt(lines):
    total = order_total(lines)
    return f"total {total:.2f}, {loyalty_points(total)} points"
