from sensor import clamp, normalised, spikes, steady_mean


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0


def test_spikes():
    assert spikes([0, 9, -12, 2], 5) == [1, 2]


def test_normalised():
    assert normalised([-5, 1, 9], 0, 4) == [0, 1, 4]


def test_too_short_has_no_mean():
    assert steady_mean([1.0, 2.0]) is None


def test_warmup_samples_are_ignored():
    assert steady_mean([50.0, 40.0, 10.0, 20.0, 30.0]) == 20.0


def test_custom_warmup():
    assert steady_mean([99.0, 3.0, 5.0], warmup=1) == 4.0
