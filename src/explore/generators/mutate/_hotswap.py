"""Standalone helper for the fork worker (stdlib only, no explore import): apply a mutant to a
module the worker has already imported, by giving the functions it changes their new code —
when that is the same as importing the mutated module afresh, so that a screening child needs
neither to import the project nor to collect its tests again.

It is the same when (checked here, else the caller imports afresh):
- the mutant changes function bodies only: the module's and its classes' own code (the names
  they bind, default values, decorators, class attributes) is unchanged;
- none of the changed functions ran before the fork (at import or collection): no state was
  built from their old code, no closure or generator of theirs is alive;
- every function object made from a changed body is found, and takes the new code.
"""

from __future__ import annotations

import gc
import os
import types
from collections import defaultdict

FUNCTION_FLAGS = 0x1 | 0x2  # CO_OPTIMIZED | CO_NEWLOCALS: a function's body, not a module's or class's


def is_function(code: types.CodeType) -> bool:
    return code.co_flags & FUNCTION_FLAGS == FUNCTION_FLAGS


def body(code: types.CodeType) -> tuple:
    """What code does, without where it stands (line numbers, positions)."""
    consts = tuple(body(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c)) for c in code.co_consts)
    return (
        code.co_code,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_flags,
        code.co_argcount,
        code.co_kwonlyargcount,
        code.co_posonlyargcount,
        consts,
    )


def shape(code: types.CodeType) -> tuple:
    """What a module's or class's own code does, the bodies of the functions it defines left out."""
    consts = tuple(
        (("function", c.co_name) if is_function(c) else shape(c))
        if isinstance(c, types.CodeType)
        else (type(c).__name__, repr(c))
        for c in code.co_consts
    )
    return (code.co_code, code.co_names, code.co_varnames, code.co_flags, consts)


def key(code: types.CodeType) -> tuple[str, int]:
    return (code.co_name, code.co_firstlineno)


def changed_functions(old: types.CodeType, new: types.CodeType) -> list[tuple[types.CodeType, types.CodeType]] | None:
    """(old, new) code of each function the change touches, defined at module or class level;
    None when more than function bodies changed."""
    if shape(old) != shape(new):
        return None
    pairs = []
    olds = [c for c in old.co_consts if isinstance(c, types.CodeType)]
    news = [c for c in new.co_consts if isinstance(c, types.CodeType)]
    for a, b in zip(olds, news):
        if is_function(a):
            if body(a) != body(b):
                pairs.append((a, b))
        else:
            inner = changed_functions(a, b)
            if inner is None:
                return None
            pairs += inner
    return pairs


class Live:
    """The parent's view of the project's functions: which exist (by file, name, first line) and
    which have run. Built after the parent imports and collects, read by the children."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root) + os.sep
        self.functions: dict[str, dict[tuple[str, int], list[types.FunctionType]]] = {}
        self.ran: set[tuple[str, str, int]] = set()
        self._real: dict[str, str | None] = {}
        self._compiled: dict[str, types.CodeType | None] = {}

    def real(self, filename: str) -> str | None:
        """The file's real path when it is the project's (not a library inside a venv there)."""
        if filename not in self._real:
            path = os.path.realpath(filename)
            ours = path.startswith(self.root) and "site-packages" not in path
            self._real[filename] = path if ours else None
        return self._real[filename]

    def profile(self, frame: types.FrameType, event: str, arg: object) -> None:
        """sys.setprofile hook while the parent imports and collects: records the project's
        functions that run."""
        if event == "call":
            code = frame.f_code
            path = self.real(code.co_filename)
            if path is not None:
                self.ran.add((path, code.co_name, code.co_firstlineno))

    def forget(self) -> None:
        """Files changed: compile them again. What ran is kept (a superset only makes swaps rarer)."""
        self.functions, self._compiled = {}, {}

    def index(self) -> None:
        self.functions = {}
        for obj in gc.get_objects():
            if type(obj) is types.FunctionType:
                path = self.real(obj.__code__.co_filename)
                if path is not None:
                    self.functions.setdefault(path, defaultdict(list))[key(obj.__code__)].append(obj)

    def original(self, path: str) -> types.CodeType | None:
        """The file's code as on disk (what the parent imported), compiled once."""
        real = os.path.realpath(path)
        if real not in self._compiled:
            try:
                with open(real, encoding="utf-8") as handle:
                    self._compiled[real] = compile(handle.read(), real, "exec", dont_inherit=True)
            except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                self._compiled[real] = None
        return self._compiled[real]

    def swap(self, files: dict[str, str], imported: set[str]) -> bool:
        """Give the live functions of the mutated files their new code, when that is the same as
        importing the files afresh (see the module's docstring); else change nothing and say so.
        `imported`: real paths of the files the process has imported."""
        plan: list[tuple[types.FunctionType, types.CodeType]] = []
        for path, text in files.items():
            real = os.path.realpath(path)
            if real not in imported:
                continue  # never imported here: the mutant's import will load the new text
            old = self.original(real)
            if old is None:
                return False
            try:
                new = compile(text, real, "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                return False
            pairs = changed_functions(old, new)
            if pairs is None:
                return False
            for before, after in pairs:
                if (real, before.co_name, before.co_firstlineno) in self.ran:
                    return False
                found = self.functions.get(real, {}).get(key(before), [])
                if not found or any(len(f.__code__.co_freevars) != len(after.co_freevars) for f in found):
                    return False
                plan += [(f, after) for f in found]
        for function, code in plan:
            function.__code__ = code
        return True
