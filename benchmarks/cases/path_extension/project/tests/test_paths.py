from paths import basename, extension, stem, with_extension


def test_basename_windows():
    assert basename("C:\\docs\\report.txt") == "report.txt"


def test_extension():
    assert extension("/tmp/photo.JPG") == "jpg"


def test_extension_none():
    assert extension("Makefile") == ""
    assert extension(".bashrc") == ""


def test_stem():
    assert stem("archive.tar.gz") == "archive.tar"


def test_with_extension():
    assert with_extension("out/data.csv", ".json") == "out/data.json"
