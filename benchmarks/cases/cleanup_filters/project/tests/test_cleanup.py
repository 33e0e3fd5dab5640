from cleanup import human_size, is_hidden, is_temp, keep


def test_regular_file_kept():
    assert keep("notes.txt")


def test_temp_dropped():
    assert not keep("notes.txt~")


def test_hidden_dropped():
    assert not keep(".env")


def test_predicates():
    assert is_hidden(".git") and not is_hidden("git")
    assert is_temp("a.swp")


def test_human_size():
    assert human_size(512) == "512 B"
    assert human_size(2048) == "2.0 KB"
