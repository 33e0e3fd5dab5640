from grades import distribution, letter_grade


def expected(score):
    for cut, g in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
        if score >= cut:
            return g
    return "F"


def test_every_integer_score():
    for s in range(0, 101):
        assert letter_grade(s) == expected(s), s


def test_distribution_boundaries():
    assert distribution([90, 80, 70, 60, 59]) == {"A": 1, "B": 1, "C": 1, "D": 1, "F": 1}
