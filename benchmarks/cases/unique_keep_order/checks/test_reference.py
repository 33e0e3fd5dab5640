from ordering import unique


def test_mixed_types_order():
    assert unique([3, "x", 3, None, "x"]) == [3, "x", None]


def test_descending():
    assert unique([9, 8, 9, 7]) == [9, 8, 7]


def test_empty():
    assert unique([]) == []
