from jobs import run_jobs


def test_empty_queue():
    assert run_jobs([], {}) == []


def test_many_retries():
    assert run_jobs(["x", "y", "z"], {"x": 3, "z": 1}) == ["y", "z", "x"]
    assert sorted(run_jobs(list("abcdef"), {"c": 2})) == list("abcdef")
