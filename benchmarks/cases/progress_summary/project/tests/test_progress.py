from progress import percent, progress_bar, remaining, summary

TASKS = [
    {"name": "write", "done": True},
    {"name": "test", "done": False},
    {"name": "ship", "done": False},
    {"name": "rest", "done": False},
]


def test_percent():
    assert percent(1, 3) == 33.3
    assert percent(5, 0) == 0.0


def test_progress_bar():
    assert progress_bar(1, 2, width=4) == "[##--] 50.0%"


def test_summary():
    assert summary(TASKS) == "1/4 done (25.0%)"


def test_remaining():
    assert remaining(TASKS) == ["test", "ship", "rest"]
