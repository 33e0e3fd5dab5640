from collection_utils import dedupe


def test_key_on_dicts():
    rows = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 1, "v": "c"}]
    assert dedupe(rows, key=lambda r: r["id"]) == rows[:2]


def test_key_by_length():
    assert dedupe(["aa", "b", "cc", "d", "eee"], key=len) == ["aa", "b", "eee"]


def test_empty():
    assert dedupe([], key=len) == []
