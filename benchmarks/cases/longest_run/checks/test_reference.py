from sequences import longest_run, runs


def test_against_runs():
    samples = ["", "a", "ab", "aabbbcc", "abbbbbbc", "zzzyx", "xyzzz", "aaabaaaa"]
    for s in samples:
        expected = max((n for _, n in runs(s)), default=0)
        assert longest_run(list(s)) == expected, s


def test_first_run_longest():
    assert longest_run([7, 7, 7, 7, 1, 2]) == 4
