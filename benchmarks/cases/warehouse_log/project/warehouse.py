"""Warehouse stock levels with a movement log."""


class Warehouse:
    def __init__(self):
        self.levels = {}
        self.log = []

    def receive(self, sku, qty):
        if qty <= 0:
            raise ValueError("quantity must be positive")
        self.levels[sku] = self.levels.get(sku, 0) + qty
        self.log.append(("receive", sku, qty))

    def ship(self, sku, qty):
        if qty <= 0:
            raise ValueError("quantity must be positive")
        if self.levels.get(sku, 0) < qty:
            raise ValueError("not enough %s in stock" % sku)
        self.levels[sku] -= qty

    def history(self, sku):
        return [(kind, qty) for kind, s, qty in self.log if s == sku]

    def replay(self):
        """Recompute stock levels from the log alone."""
        levels = {}
        for kind, sku, qty in self.log:
            sign = 1 if kind == "receive" else -1
            levels[sku] = levels.get(sku, 0) + sign * qty
        return levels
