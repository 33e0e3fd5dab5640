"""The real agent CLIs the tests drive, installed with npm into a cache folder and reused.

`EXPLORE_AGENT_CLIS` names the folder (default ~/.cache/explore/agent-clis); each pinned package
gets its own prefix there, installed once (under a lock: parallel test workers share it). Without
npm the test fails with that reason — set EXPLORE_SKIP_REAL_CLIS=1 to skip these tests instead
(README: Tests)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

PINNED = {
    "claude": "@anthropic-ai/claude-code@2.1.331",
    "codex": "@openai/codex@0.169.0",
    "gemini": "@google/gemini-cli@0.61.0",
    "qwen": "@qwen-code/qwen-code@0.24.4",
}
"""The CLI versions tested for real (README: Named agents)."""

OLDER = {"claude": "@anthropic-ai/claude-code@2.1.197"}
"""An older release people still have installed (issue 41: one that knows no `--permission-prompts`)."""


def cache_dir() -> Path:
    return Path(os.environ.get("EXPLORE_AGENT_CLIS") or Path.home() / ".cache" / "explore" / "agent-clis")


def real_cli(name: str, package: str | None = None) -> Path:
    """The path of the real `name` executable (of `package`, default the pinned release), installed on first use."""
    if os.environ.get("EXPLORE_SKIP_REAL_CLIS"):
        pytest.skip("EXPLORE_SKIP_REAL_CLIS is set: the tests against the real agent CLIs are skipped")
    package = package or PINNED[name]
    prefix = cache_dir() / package.replace("/", "+")
    binary = prefix / "node_modules" / ".bin" / name
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm is needed to install {package} for this test (or set EXPLORE_SKIP_REAL_CLIS=1 to skip it)")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), package],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0 or not binary.exists():
                pytest.fail(f"`npm install {package}` failed ({done.returncode}): {done.stderr[-2000:]}")
    return binary
