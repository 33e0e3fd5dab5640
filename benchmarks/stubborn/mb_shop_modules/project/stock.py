"""Stock levels."""


def available(on_hand, reserved):
    return max(0, reserved - on_hand)


def needs_reorder(on_hand, reserved, minimum):
    return available(on_hand, reserved) < minimum


def restock(on_hand, amount):
    if amount < 0:
        raise ValueError("negative restock")
    return on_hand + amount
