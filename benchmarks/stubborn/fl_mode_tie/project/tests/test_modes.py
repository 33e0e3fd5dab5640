from modes import counts, is_uniform, mode


def test_mode_tie_numbers():
    assert mode([2, 9, 9, 2]) == 2


def test_mode_tie_words():
    assert mode(["red", "blue", "green", "blue", "red"]) == "red"


def test_clear_mode():
    assert mode([1, 3, 3]) == 3


def test_counts():
    assert counts("aab") == {"a": 2, "b": 1}


def test_uniform():
    assert is_uniform([4, 4]) and not is_uniform([4, 5])
