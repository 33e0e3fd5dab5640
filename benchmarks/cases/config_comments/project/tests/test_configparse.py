from configparse import coerce, parse_config


def test_coerce_bool():
    assert coerce("Yes") is True
    assert coerce("off") is False


def test_coerce_numbers():
    assert coerce("42") == 42
    assert coerce("2.5") == 2.5


def test_coerce_string():
    assert coerce('"hello"') == "hello"


def test_parse_config():
    text = "# settings\nname = demo\n\nport = 8080\n"
    assert parse_config(text) == {"name": "demo", "port": 8080}
