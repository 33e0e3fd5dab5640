"""Shopping-cart arithmetic, in cents."""

TAX_RATE = 0.2


def line_total(item):
    return item["price"] * item["qty"]


def subtotal(cart):
    """Sum of the line totals, discounted lines at their discounted price."""
    total = 0
    for item in cart:
        price = item["price"] - item.get("discount", 0)
        total = price * item["qty"]
    return total


def tax(amount):
    return round(amount * TAX_RATE)


def receipt(cart):
    sub = subtotal(cart)
    return {"subtotal": sub, "tax": tax(sub), "total": sub + tax(sub)}
