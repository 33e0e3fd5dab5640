"""Unweighted graph helpers (adjacency lists)."""
from collections import deque


def build_graph(edges, directed=False):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
        if not directed:
            graph[b].append(a)
    return graph


def bfs_order(graph, start):
    seen = {start}
    order = []
    queue = deque([start])
    while queue:
        node = queue.popleft()
        order.append(node)
        for nbr in graph.get(node, []):
            if nbr not in seen:
                seen.add(nbr)
                queue.append(node)
    return order


def shortest_path_length(graph, start, goal):
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            return dist[node]
        for nbr in graph.get(node, []):
            if nbr not in dist:
                dist[nbr] = dist[node] + 1
                queue.append(nbr)
    return -1


def degree(graph, node):
    return len(graph.get(node, []))
