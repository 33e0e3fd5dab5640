"""Outfits: one item from each group of clothes."""


def pick_one_each(groups):
    """Every way to pick one option from each group, in order."""
    if not groups:
        return []
    rest = pick_one_each(groups[1:])
    return [[option] + tail for option in groups[0] for tail in rest]


def count_outfits(groups):
    total = 1
    for group in groups:
        total *= len(group)
    return total


def describe(outfit):
    return " + ".join(outfit) if outfit else "nothing"


def outfits_without(groups, banned):
    return [o for o in pick_one_each(groups) if banned not in o]
