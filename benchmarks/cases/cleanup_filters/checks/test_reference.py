import itertools

from cleanup import filter_names, keep


NAMES = ["a.py", ".hidden", "b.tmp", ".x.swp", "c~"]


def test_truth_table():
    for hidden, temp in itertools.product([False, True], repeat=2):
        for name in NAMES:
            exp = not ((name.endswith((".tmp", ".swp", "~")) and not temp) or (name.startswith(".") and not hidden))
            assert keep(name, include_hidden=hidden, include_temp=temp) == exp, (name, hidden, temp)


def test_filter_names():
    assert filter_names(NAMES) == ["a.py"]
    assert filter_names(NAMES, include_hidden=True) == ["a.py", ".hidden"]
