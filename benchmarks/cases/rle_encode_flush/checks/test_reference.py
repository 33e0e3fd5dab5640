from rle import decode, encode


def test_round_trip():
    for s in ["a", "ab", "aaaa", "abba", "wwwwbbbw", "xyz", "aabbaa"]:
        assert decode(encode(s)) == s


def test_single_char():
    assert encode("q") == [("q", 1)]


def test_runs_are_maximal():
    runs = encode("aabbbaaa")
    assert runs == [("a", 2), ("b", 3), ("a", 3)]
