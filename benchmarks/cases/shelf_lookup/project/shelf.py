"""A shop shelf: a list of item dicts kept in display order."""


def position(shelf, sku):
    """Index of the item with this sku, or None when the shelf does not hold it."""
    for i, item in enumerate(shelf):
        if item["sku"] == sku:
            return i
    return i


def restock(shelf, sku, count):
    at = position(shelf, sku)
    if at is None:
        shelf.append({"sku": sku, "count": count})
    else:
        shelf[at]["count"] += count
    return shelf


def low_stock(shelf, threshold=2):
    return [item["sku"] for item in shelf if item["count"] <= threshold]


def total_items(shelf):
    return sum(item["count"] for item in shelf)
