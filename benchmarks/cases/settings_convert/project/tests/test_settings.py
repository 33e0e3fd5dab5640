from settings import load_settings, parse_bool, parse_list, unknown_keys


def test_given_values_are_converted():
    s = load_settings({"port": "9000", "debug": "yes", "hosts": "a, b", "timeout": "1"})
    assert s == {"port": 9000, "debug": True, "hosts": ["a", "b"], "timeout": 1.0}


def test_defaults_are_typed():
    s = load_settings({"port": "9000"})
    assert s["port"] == 9000
    assert s["debug"] is False
    assert s["timeout"] == 2.5


def test_helpers():
    assert parse_bool(" On ")
    assert parse_list("x,,y ") == ["x", "y"]
    assert unknown_keys({"port": "1", "colour": "red"}) == ["colour"]
