import random

from orders import order_total


def test_random_orders():
    rng = random.Random(11)
    for _ in range(200):
        lines = [(rng.randint(1, 999) / 100, rng.randint(1, 5)) for _ in range(rng.randint(1, 6))]
        assert abs(order_total(lines) - round(sum(p * q for p, q in lines), 2)) < 1e-9
