"""pytest_plugin: explore's own pytest plugin, loaded inside the project's pytest by path (see
edges.testing.PLUGIN_DIR). It runs in the user's interpreter, so it imports nothing of explore and
nothing heavy; nothing of explore imports it."""
