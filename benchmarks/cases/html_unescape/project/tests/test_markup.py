from markup import escape, slugify, strip_tags, unescape


def test_escape():
    assert escape('<a href="x">') == "&lt;a href=&quot;x&quot;&gt;"


def test_unescape():
    assert unescape("&lt;b&gt;bold&lt;/b&gt;") == "<b>bold</b>"


def test_strip_tags():
    assert strip_tags("<p>Hi <em>there</em></p>") == "Hi there"


def test_slugify():
    assert slugify("Hello, World! 2024") == "hello-world-2024"
