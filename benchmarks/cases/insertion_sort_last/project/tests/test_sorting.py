from sorting import insertion_sort, is_sorted, sort_records


def test_already_sorted():
    assert insertion_sort([1, 2, 3]) == [1, 2, 3]


def test_reverse_input():
    assert insertion_sort([3, 2, 1]) == [1, 2, 3]


def test_is_sorted():
    assert is_sorted([])
    assert not is_sorted([2, 1])


def test_sort_records_by_field():
    rows = [{"n": "b", "age": 30}, {"n": "a", "age": 20}]
    assert [r["n"] for r in sort_records(rows, "age")] == ["a", "b"]
