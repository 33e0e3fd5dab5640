from uniq import first_unique, repeated_items


def test_first_unique_numbers():
    assert first_unique([7, 3, 7, 1]) == 3


def test_first_unique_words():
    assert first_unique(["pear", "fig", "pear", "kiwi"]) == "fig"


def test_none_unique():
    assert first_unique(["a", "a"]) is None


def test_repeated():
    assert repeated_items(["a", "b", "a", "a", "b"]) == ["a", "b"]
