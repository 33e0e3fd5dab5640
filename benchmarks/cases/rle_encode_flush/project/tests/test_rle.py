from rle import decode, encode, from_string, to_string


def test_encode_empty():
    assert encode("") == []


def test_encode():
    assert encode("aaabcc") == [("a", 3), ("b", 1), ("c", 2)]


def test_decode():
    assert decode([("x", 2), ("y", 1)]) == "xxy"


def test_to_string():
    assert to_string([("a", 3), ("b", 1)]) == "3a1b"


def test_from_string():
    assert from_string("12w1b") == [("w", 12), ("b", 1)]
