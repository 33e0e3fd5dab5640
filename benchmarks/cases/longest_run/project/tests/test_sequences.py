from sequences import differences, is_monotonic, longest_run, runs


def test_longest_run_empty():
    assert longest_run([]) == 0


def test_longest_run_all_same():
    assert longest_run([5, 5, 5]) == 3


def test_longest_run_middle():
    assert longest_run([1, 1, 2, 2, 2, 3]) == 3


def test_runs():
    assert runs("aab") == [("a", 2), ("b", 1)]


def test_is_monotonic():
    assert is_monotonic([3, 2, 2, 1])
    assert not is_monotonic([1, 3, 2])


def test_differences():
    assert differences([1, 4, 9]) == [3, 5]
