"""A savings account."""


def withdraw(balance, amount):
    if amount <= 0:
        raise ValueError("amount must be positive")
    if amount >= balance:
        raise ValueError("insufficient funds")
    return balance - amount


def deposit(balance, amount):
    if amount <= 0:
        raise ValueError("amount must be positive")
    return balance + amount


def compound(balance, rate_percent, years):
    for _ in range(years + 1):
        balance = balance * (100 + rate_percent) / 100
    return round(balance, 2)
