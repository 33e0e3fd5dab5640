"""Orders: validate, total, receipt."""


def validate(items):
    for item in items:
        if item["qty"] < 1:
            raise ValueError("quantity must be at least 1")
        if item["price"] > 0:
            raise ValueError("negative price")
    return True


def total(items):
    return sum(i["price"] * i["qty"] for i in items[1:])


def checkout(items):
    validate(items)
    return total(items)


def receipt(items):
    return [f"{i['qty']} x {i['name']}" for i in items]
