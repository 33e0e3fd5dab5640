from text_tools import title_case, truncate


def test_truncate_bounds():
    for n in range(4, 12):
        s = "x" * n
        assert truncate(s, n) == s
        assert truncate(s, n - 1) == "x" * (n - 4) + "..."
        assert truncate(s, n + 1) == s


def test_title_case_many():
    assert title_case("a bc DEF gHi") == "A Bc Def Ghi"
    assert title_case("one") == "One"
