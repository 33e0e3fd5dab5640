from chains import chain, contains, starts_with, to_list


def test_round_trip():
    assert to_list(chain([1, 2, 3])) == [1, 2, 3]
    assert to_list(chain([])) == []


def test_starts_with():
    assert starts_with(chain([1, 2, 3]), chain([1, 2]))
    assert not starts_with(chain([1, 2]), chain([2]))
    assert not starts_with(chain([1]), chain([1, 2]))


def test_run_at_the_start():
    assert contains(chain([4, 5, 6]), chain([4, 5]))


def test_empty_run():
    assert contains(chain([]), chain([]))


def test_run_in_the_middle():
    assert contains(chain([1, 2, 3, 4]), chain([2, 3]))


def test_run_longer_than_the_chain():
    assert not contains(chain([3]), chain([1, 2]))


def test_missing_value():
    assert not contains(chain([5, 6]), chain([7]))


def test_values_apart_are_no_run():
    assert not contains(chain([1, 2, 9, 3]), chain([2, 3]))
