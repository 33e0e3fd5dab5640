from csvline import join_line, quote, split_line


def test_plain_split():
    assert split_line("a,b,,c") == ["a", "b", "", "c"]


def test_quoted_separator():
    assert split_line('name,"Smith, J",42') == ["name", "Smith, J", "42"]


def test_quote():
    assert quote("a,b") == '"a,b"'
    assert quote("ab") == "ab"


def test_join_line():
    assert join_line(["x", "y;z"], sep=";") == 'x;"y;z"'
