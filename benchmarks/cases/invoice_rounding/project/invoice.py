"""Invoice totals with tax."""

TAX_RATE = 0.2


def line_total(qty, unit_price):
    if qty < 0:
        raise ValueError("negative quantity")
    return round(qty * unit_price, 1)


def subtotal(lines):
    return round(sum(line_total(q, p) for q, p in lines), 2)


def tax(amount, rate=TAX_RATE):
    return round(amount * rate, 2)


def invoice_total(lines, rate=TAX_RATE):
    sub = subtotal(lines)
    return round(sub + tax(sub, rate), 2)


def format_amount(amount):
    return "{:,.2f}".format(amount)
