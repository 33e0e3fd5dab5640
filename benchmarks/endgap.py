"""Issue 40.6: the time between "merged candidate" and the run's last word ("fast-forwarded …" or,
with --no-apply, "result left on …") — on networkx 7–11 s with 2–3 candidates — and how much of it
the worktrees' removal takes (the `close: … worktrees Ns` debug line).

A repository of --modules one-function modules, their tests in --files test files and one bug
(`pkg/calc.py`: `a - b`), repaired by a scripted command agent with three candidates (a wrong, b and
c right); each explore named by --src (a checkout's source tree put first on PYTHONPATH: main's and a
branch's — not a `git archive` copy of `src` alone: the built-in strategies are a link out of
`src`, and every run then fails before its first iteration), run one after the other, round by
round, so the machine's load drifts over all alike.

Run: python benchmarks/endgap.py --src /work/main/src --src /work/wt/NAME/src [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

AGENT = """\
import os, pathlib
ops = {"a": "a * b", "b": "a + b", "c": "b + a"}
pathlib.Path("pkg/calc.py").write_text(f"def add(a, b):\\n    return {ops[os.environ['EXPLORE_CANDIDATE']]}\\n")
"""
STAMP = re.compile(r"^\s*([0-9.]+)s (.*)$")


def build(root: Path, modules: int, files: int) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    per = max(1, modules // files)
    for i in range(modules):
        (repo / "pkg" / f"m{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    for j in range(files):
        ks = range(j * per, min(modules, (j + 1) * per))
        imports = "".join(f"from pkg.m{k} import f{k}\n" for k in ks)
        tests = "".join(f"\n\ndef test_{k}():\n    assert f{k}(0) == {k}\n" for k in ks)
        (repo / "tests" / f"test_t{j}.py").write_text(imports + tests)
    (repo / "tests" / "test_calc.py").write_text(
        "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    git = ["git", "-C", str(repo), "-c", "user.email=b@e", "-c", "user.name=bench"]
    subprocess.run([*git[:3], "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)
    (root / "agent.py").write_text(AGENT)
    return repo


def one(src: str, repo: Path, agent: Path) -> dict[str, float | None]:
    env = {**os.environ, "PYTHONPATH": src}
    command = [sys.executable, "-m", "explore", "run", str(repo), "--agent-cmd", f"{sys.executable} {agent}"]
    done = subprocess.run(
        [*command, "--parallel", "3", "--verbose", "--no-apply"],
        env=env,
        capture_output=True,
        text=True,
    )
    marks: dict[str, float | None] = {"merged": None, "last": None, "worktrees": None, "exit": done.returncode}
    for line in done.stderr.splitlines():
        found = STAMP.match(line)
        if not found:
            continue
        at, text = float(found.group(1)), found.group(2)
        if text.startswith("merged candidate"):
            marks["merged"] = at
        elif text.startswith(("fast-forwarded", "result left on")):
            marks["last"] = at
        elif "close:" in text and (w := re.search(r"worktrees ([0-9.]+)s", text)):
            marks["worktrees"] = float(w.group(1))
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", action="append", required=True, help="an explore source tree (repeat)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modules", type=int, default=1500)
    parser.add_argument("--files", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="endgap-") as tmp:
        repo = build(Path(tmp), args.modules, args.files)
        for n in range(args.rounds):
            order = args.src if n % 2 == 0 else list(reversed(args.src))
            for src in order:
                load = os.getloadavg()[0]
                m = one(src, repo, Path(tmp) / "agent.py")
                gap = (m["last"] - m["merged"]) if m["last"] is not None and m["merged"] is not None else None
                print(
                    f"round {n + 1} {src}: load {load:.1f}, merged → last word "
                    f"{'- (no merge: exit ' + str(m['exit']) + ')' if gap is None else f'{gap:.1f}s'}, "
                    f"worktree removal {m['worktrees']}s",
                    flush=True,
                )


if __name__ == "__main__":
    main()
