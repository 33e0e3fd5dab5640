from colors import blend, lerp, remap, to_hex


def test_lerp():
    assert lerp(10, 20, 0.5) == 15


def test_blend():
    assert blend((0, 0, 0), (255, 255, 255), 0.5) == (128, 128, 128)


def test_remap_to_percent():
    assert remap(5, 0, 10, 0, 100) == 50


def test_remap_shifted():
    assert remap(15, 10, 20, 100, 200) == 150


def test_hex():
    assert to_hex((255, 0, 16)) == "#ff0010"
