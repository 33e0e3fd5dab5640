"""How a mutant's code gets into mutate's worker (`_worker.py`), in the *project's* interpreter
(stdlib only). Copied next to the worker as `_explore_mutate_loading`: an import hook that loads
mutated files from memory, and the bytecode cache the worker's children share."""

from __future__ import annotations

import importlib.machinery
import os
import sys


class MutantLoader(importlib.machinery.SourceFileLoader):
    """Loads the mutant's text instead of the file, never reading or writing bytecode."""

    def __init__(self, fullname, path, text):
        super().__init__(fullname, path)
        self.text = text

    def get_data(self, path):
        if os.path.realpath(path) == os.path.realpath(self.path):
            return self.text.encode("utf-8")
        return super().get_data(path)

    def path_stats(self, path):
        raise OSError("mutant: no bytecode")


class MutantFinder:
    """First on sys.meta_path: any module whose file is mutated is loaded from memory."""

    def __init__(self, files):
        self.files = {os.path.realpath(path): text for path, text in files.items()}

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin:
            return None
        real = os.path.realpath(spec.origin)
        if real not in self.files:
            return None
        spec.loader = MutantLoader(fullname, spec.origin, self.files[real])
        return spec

    def invalidate_caches(self):
        pass


def cache_bytecode(prefix):
    """From here on (pytest and the preloaded modules are in, with their own bytecode), the
    modules the children import write and read their bytecode under `prefix`, never beside the
    project's files — even where the environment says not to write it: else every child
    compiles every project module again (wcwidth's tables: 0.27 s of each mutant's ~0.4 s)."""
    if prefix:
        os.makedirs(prefix, exist_ok=True)
        sys.pycache_prefix = prefix
        sys.dont_write_bytecode = False


def forget_bytecode(paths):
    """Drop the cached bytecode (the interpreter's and pytest's rewritten tests) of files that
    changed: a change within the second of the last one, at the same size, would otherwise
    load the old code."""
    prefix = sys.pycache_prefix
    for path in paths:
        real = os.path.realpath(path)
        folder = (
            os.path.join(prefix, os.path.dirname(real).lstrip(os.sep))
            if prefix
            else os.path.join(os.path.dirname(real), "__pycache__")
        )
        stem = os.path.splitext(os.path.basename(real))[0] + "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(stem) and name.endswith(".pyc"):
                try:
                    os.remove(os.path.join(folder, name))
                except OSError:
                    pass
