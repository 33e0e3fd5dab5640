from warehouse import Warehouse


def test_replay_matches_levels():
    w = Warehouse()
    w.receive("a", 10)
    w.receive("b", 3)
    w.ship("a", 4)
    w.ship("b", 3)
    w.receive("a", 1)
    assert w.replay() == w.levels == {"a": 7, "b": 0}


def test_failed_ship_not_logged():
    w = Warehouse()
    w.receive("a", 1)
    try:
        w.ship("a", 2)
    except ValueError:
        pass
    assert w.log == [("receive", "a", 1)]


def test_ship_logged_once():
    w = Warehouse()
    w.receive("a", 2)
    w.ship("a", 1)
    assert w.log.count(("ship", "a", 1)) == 1
