from config import dump, load, parse_line


def test_round_trip():
    data = {"alpha": "1", "beta": "two words", "gamma": "x=y"}
    assert load("# head\n" + dump(data) + "\n\n# tail") == data


def test_value_with_equals():
    assert parse_line("a = b = c") == ("a", "b = c")
