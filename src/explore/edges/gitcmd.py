"""The start of every git command line explore runs (re-exported by gitrepo): inert, so no hook and
no fsmonitor runs, and nothing a candidate planted in the shared git dir runs under explore's name.
Its own module so that objects.py, which gitrepo's commits record their writes in, can use it too."""

INERT = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
GIT = ("git", *INERT)
"""The start of every git command line explore runs."""
