from settings import DEFAULTS, effective, merge_settings


def test_none_keeps_default():
    assert merge_settings({"a": 1}, {"a": None}) == {"a": 1}


def test_inputs_not_mutated():
    d, o = {"a": 1}, {"b": 2}
    merge_settings(d, o)
    assert d == {"a": 1} and o == {"b": 2}


def test_effective_empty():
    assert effective({}) == DEFAULTS
