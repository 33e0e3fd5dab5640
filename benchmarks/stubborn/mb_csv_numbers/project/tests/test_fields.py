from fields import join_fields, split_fields


def test_split():
    assert split_fields(" a, b ,c") == ["a", "b", "c"]


def test_blank():
    assert split_fields("   ") == []


def test_join():
    assert join_fields([1, "x"]) == "1,x"
