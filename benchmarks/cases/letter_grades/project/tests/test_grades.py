import pytest

from grades import average, letter_grade, passed


def test_clear_grades():
    assert letter_grade(95) == "A"
    assert letter_grade(72) == "C"
    assert letter_grade(10) == "F"


def test_cutoffs_inclusive():
    assert letter_grade(90) == "A"
    assert letter_grade(80) == "B"
    assert letter_grade(60) == "D"


def test_out_of_range():
    with pytest.raises(ValueError):
        letter_grade(101)


def test_average():
    assert average([80, 90]) == 85


def test_passed():
    assert passed([59, 60, 100]) == [60, 100]
