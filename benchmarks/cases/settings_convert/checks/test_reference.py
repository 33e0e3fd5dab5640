from settings import load_settings


def test_all_defaults():
    assert load_settings({}) == {"port": 8080, "debug": False, "hosts": ["localhost"], "timeout": 2.5}


def test_custom_schema_defaults_converted():
    schema = {"n": (int, "3"), "name": (str.upper, "abc")}
    assert load_settings({}, schema) == {"n": 3, "name": "ABC"}
    assert load_settings({"name": "x"}, schema) == {"n": 3, "name": "X"}
