import itertools

from outfits import count_outfits, pick_one_each


def test_matches_product():
    groups = [["a", "b"], ["c"], ["d", "e", "f"]]
    assert pick_one_each(groups) == [list(p) for p in itertools.product(*groups)]
    assert len(pick_one_each(groups)) == count_outfits(groups)


def test_no_groups_is_one_empty_choice():
    assert pick_one_each([]) == [[]]
    assert pick_one_each([["x"]]) == [["x"]]
