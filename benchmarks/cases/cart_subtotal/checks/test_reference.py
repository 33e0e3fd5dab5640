import random

from cart import receipt, subtotal


def test_random_carts():
    rng = random.Random(11)
    for _ in range(200):
        cart = []
        for _ in range(rng.randint(0, 6)):
            item = {"price": rng.randint(1, 1000), "qty": rng.randint(1, 5)}
            if rng.random() < 0.3:
                item["discount"] = rng.randint(0, item["price"])
            cart.append(item)
        expected = sum((i["price"] - i.get("discount", 0)) * i["qty"] for i in cart)
        assert subtotal(cart) == expected


def test_receipt_three_lines():
    cart = [{"price": 100, "qty": 1}, {"price": 200, "qty": 1}, {"price": 300, "qty": 2}]
    assert receipt(cart) == {"subtotal": 900, "tax": 180, "total": 1080}
