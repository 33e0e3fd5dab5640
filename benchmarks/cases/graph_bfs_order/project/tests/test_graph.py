from graph import bfs_order, build_graph, degree, shortest_path_length


def test_build_graph_undirected():
    g = build_graph([(1, 2), (2, 3)])
    assert g == {1: [2], 2: [1, 3], 3: [2]}


def test_bfs_order_path():
    g = build_graph([("a", "b"), ("b", "c")])
    assert bfs_order(g, "a") == ["a", "b", "c"]


def test_bfs_isolated_start():
    assert bfs_order({"x": []}, "x") == ["x"]


def test_shortest_path():
    g = build_graph([(1, 2), (2, 3), (1, 4), (4, 3)])
    assert shortest_path_length(g, 1, 3) == 2
    assert shortest_path_length(g, 1, 99) == -1


def test_degree():
    assert degree(build_graph([(1, 2), (1, 3)]), 1) == 2
