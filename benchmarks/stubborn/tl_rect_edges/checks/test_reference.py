from rects import contains


def test_oracle():
    r = (1, 2, 3, 2)
    for px in range(0, 6):
        for py in range(0, 6):
            assert contains(r, (px, py)) == (1 <= px < 4 and 2 <= py < 4)
