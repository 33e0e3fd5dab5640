from paths import extension


def test_double_extension():
    assert extension("backup.tar.GZ") == "gz"


def test_dir_with_dot():
    assert extension("my.dir/readme") == ""
    assert extension("my.dir/readme.md") == "md"


def test_hidden_with_ext():
    assert extension(".config.yaml") == "yaml"
