from intervals import overlaps


def test_overlap_oracle():
    for a0 in range(0, 5):
        for a1 in range(a0, 6):
            for b0 in range(0, 5):
                for b1 in range(b0, 6):
                    want = bool(set(range(a0, a1 + 1)) & set(range(b0, b1 + 1)))
                    assert overlaps((a0, a1), (b0, b1)) == want
