from graph import bfs_order, build_graph


def test_levels_in_order():
    g = build_graph([(0, 1), (0, 2), (1, 3), (2, 4), (3, 5)])
    assert bfs_order(g, 0) == [0, 1, 2, 3, 4, 5]


def test_directed_unreachable():
    g = build_graph([(1, 2), (3, 1)], directed=True)
    assert bfs_order(g, 1) == [1, 2]


def test_cycle_visits_each_once():
    g = build_graph([(1, 2), (2, 3), (3, 1), (3, 4)])
    order = bfs_order(g, 1)
    assert sorted(order) == [1, 2, 3, 4]
    assert len(order) == 4
