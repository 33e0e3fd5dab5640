from settings import diff_settings, effective, merge_settings, unknown_keys


def test_merge_overrides_win():
    assert merge_settings({"a": 1, "b": 2}, {"b": 3}) == {"a": 1, "b": 3}


def test_diff_settings():
    assert diff_settings({"a": 1, "b": 2}, {"a": 1, "b": 5, "c": 0}) == {"b": (2, 5), "c": (None, 0)}


def test_unknown_keys():
    assert unknown_keys({"theme": "dark", "colour": "red"}) == ["colour"]


def test_effective_page_size():
    assert effective({"theme": "dark"})["page_size"] == 20
