from jobs import parse_attempts, run_jobs, summary


def test_parse_attempts():
    assert parse_attempts("a=1, b=2,") == {"a": 1, "b": 2}


def test_summary():
    assert summary(["a", "b"]) == "2 done: a, b"
    assert summary([]) == "nothing done"


def test_no_retries_keeps_order():
    assert run_jobs(["a", "b", "c"], {}) == ["a", "b", "c"]


def test_retried_job_finishes_last():
    assert run_jobs(["a", "b"], {"a": 1}) == ["b", "a"]
