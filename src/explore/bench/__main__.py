"""`python -m explore.bench` — the same command as `explore bench`."""

from .command import bench

bench(prog_name="explore bench")
