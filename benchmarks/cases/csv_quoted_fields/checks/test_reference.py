from csvline import join_line, parse, split_line


def test_round_trip():
    for fields in (["a", "b,c", "d"], ["", "x, y, z", ""], ["one"]):
        assert split_line(join_line(fields)) == fields


def test_parse():
    text = 'city,note\nParis,"big, old"\nOslo,cold\n'
    assert parse(text) == [{"city": "Paris", "note": "big, old"}, {"city": "Oslo", "note": "cold"}]


def test_semicolon():
    assert split_line('1;"a;b";3', sep=";") == ["1", "a;b", "3"]
