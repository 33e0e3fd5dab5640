from outfits import count_outfits, describe, outfits_without, pick_one_each


def test_count():
    assert count_outfits([["a", "b"], ["c", "d", "e"]]) == 6


def test_describe():
    assert describe(["hat", "coat"]) == "hat + coat"
    assert describe([]) == "nothing"


def test_two_groups():
    assert pick_one_each([["hat", "cap"], ["coat"]]) == [["hat", "coat"], ["cap", "coat"]]


def test_without_banned_item():
    assert outfits_without([["hat", "cap"], ["coat", "vest"]], "cap") == [["hat", "coat"], ["hat", "vest"]]
