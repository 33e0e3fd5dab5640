from config import dump, load, parse_line


def test_parse_line():
    assert parse_line(" name = explore ") == ("name", "explore")


def test_load_with_comments():
    text = "# settings\nname = explore\n\nlevel = 3\n"
    assert load(text) == {"name": "explore", "level": "3"}


def test_dump():
    assert dump({"b": 1, "a": 2}) == "a = 2\nb = 1"
