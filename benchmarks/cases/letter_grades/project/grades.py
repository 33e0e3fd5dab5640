"""Course grading."""


def letter_grade(score):
    if not 0 <= score <= 100:
        raise ValueError("score out of range: %r" % score)
    if score > 90:
        return "A"
    if score > 80:
        return "B"
    if score >= 70:
        return "C"
    if score >= 60:
        return "D"
    return "F"


def average(scores):
    return sum(scores) / len(scores) if scores else 0.0


def distribution(scores):
    dist = {g: 0 for g in "ABCDF"}
    for s in scores:
        dist[letter_grade(s)] += 1
    return dist


def passed(scores):
    return [s for s in scores if letter_grade(s) != "F"]
