"""explore: repairs failing test suites with candidate fixes tried side by side in git worktrees."""

__version__ = "0.1.0"
