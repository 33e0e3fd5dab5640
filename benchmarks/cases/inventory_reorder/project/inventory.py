"""Simple stock inventory with reorder thresholds."""


class Inventory:
    def __init__(self):
        self.stock = {}
        self.thresholds = {}

    def add(self, sku, qty, threshold=None):
        if qty < 0:
            raise ValueError("quantity must be non-negative")
        self.stock[sku] = self.stock.get(sku, 0) + qty
        if threshold is not None:
            self.thresholds[sku] = threshold

    def remove(self, sku, qty):
        available = self.stock.get(sku, 0)
        if qty > available:
            raise ValueError("insufficient stock for %s" % sku)
        self.stock[sku] = available - qty

    def needs_reorder(self):
        """SKUs whose stock has fallen to or below their threshold."""
        return sorted(
            sku for sku, qty in self.stock.items()
            if qty < self.thresholds.get(sku, 0)
        )

    def total_units(self):
        return sum(self.stock.values())

    def value(self, prices):
        return sum(qty * prices.get(sku, 0) for sku, qty in self.stock.items())
