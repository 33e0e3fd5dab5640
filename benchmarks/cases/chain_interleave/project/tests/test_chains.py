from chains import chain, interleaves, to_list


def test_round_trip():
    assert to_list(chain([1, 2, 3])) == [1, 2, 3]
    assert to_list(chain([])) == []


def test_first_then_second():
    assert interleaves(chain([1, 2]), chain([3]), chain([1, 2, 3]))


def test_wrong_order_is_rejected():
    assert not interleaves(chain([1, 2]), chain([3]), chain([2, 1, 3]))


def test_second_chain_first():
    assert interleaves(chain([1]), chain([7, 8]), chain([7, 8, 1]))


def test_alternating():
    assert interleaves(chain([1, 3]), chain([2, 4]), chain([1, 2, 3, 4]))
