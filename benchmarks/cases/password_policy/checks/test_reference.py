import itertools

from passwords import is_strong, problems


def test_each_requirement_needed():
    assert not is_strong("ABCDEFGH1")      # no symbol
    assert not is_strong("ABCDEFGH!")      # no digit
    assert not is_strong("abcdefgh1!")     # no upper
    assert is_strong("abcdefgH1!")


def test_consistent_with_problems():
    pieces = ["a", "B", "7", "#", "xyzw", "QQ"]
    for n in range(1, 5):
        for combo in itertools.permutations(pieces, n):
            pw = "".join(combo)
            assert is_strong(pw) == (problems(pw) == []), pw
