from progress import summary


def test_summary_all_done():
    assert summary([{"name": "a", "done": True}] * 3) == "3/3 done (100.0%)"


def test_summary_none_done():
    assert summary([{"name": "a", "done": False}] * 2) == "0/2 done (0.0%)"


def test_summary_empty():
    assert summary([]) == "0/0 done (0.0%)"


def test_summary_two_of_three():
    tasks = [{"name": str(i), "done": i < 2} for i in range(3)]
    assert summary(tasks) == "2/3 done (66.7%)"
