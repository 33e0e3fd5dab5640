"""Shipping costs."""

FREE_FROM = 50
STANDARD = 5


def shipping(total, express=False):
    if total > FREE_FROM:
        return 0
    cost = STANDARD
    if express:
        cost = cost * 2
    return cost


def grand_total(total, express=False):
    return total + shipping(total, express)
