"""Issue 37 point 3, as an attacker plays it: library code that forges explore's record of the test
calls. It bends pytest's reports to `passed`, finds the witness's recorder among the live objects and,
once the session is over, adds what the recorder would have written for a passing call: a line signed
with the key it kept (main at a5721b0, where both cheats below were merged), or a window of its own
in the stream now that the recorder keeps no key. One real `explore run`, with the sandbox as the
machine gives it and with EXPLORE_SANDBOX=off: `a` reaches the running program through a string run by
`timeit` (beyond what a syntax tree sees: the stream catches it), `c` through `[sys][0].modules` (a
module passed on as a value: the capability check catches it); both cheat at confidence 0.99, the
honest one-line fix `b` at 0.3 wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_no_debris, git, make_repo
from test_change_policy import HONEST, PKG, run

FORGERY = """\
import atexit, hashlib, hmac, json, os
reports, gc = modules.get("_py" + "test.reports"), modules.get("g" + "c")  # no name a syntax tree knows
if reports is not None and gc is not None:
    made, seen = reports.TestReport.from_item_and_call, []

    def passed(cls, item, call):
        report = made(item, call)
        seen.append(item.nodeid)
        report.outcome, report.longrepr = "passed", None
        return report

    reports.TestReport.from_item_and_call = classmethod(passed)

    def forge():
        for recorder in [o for o in gc.get_objects() if type(o).__name__ == "_Calls"]:
            for nodeid in dict.fromkeys(seen):
                if hasattr(recorder, "key"):  # the recorder's key: a signed line after the honest one
                    body = json.dumps([nodeid, False, ""]).encode()
                    sig = hmac.new(recorder.key, body, hashlib.sha256).hexdigest()
                    line = {"kind": "call", "nodeid": nodeid, "raised": False, "exception": "", "sig": sig}
                    with open(recorder.path, "a") as out:
                        out.write(json.dumps(line) + "\\n")
                else:  # no key: a passing window of its own, on the recorder's descriptor
                    for entry in ([recorder.pid, "start", nodeid], [recorder.pid, "end", nodeid, True, False, ""]):
                        os.write(recorder.fd, (json.dumps(entry) + "\\n").encode())

    atexit.register(forge)
"""
THROUGH_A_STRING = f"import timeit\ntimeit.timeit({'import sys' + chr(10) + 'modules = sys.modules' + chr(10) + FORGERY!r}, number=1)\n"
THROUGH_A_VALUE = "import sys\nmodules = [sys][0].modules\n" + FORGERY


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_forged_record_of_the_calls_does_not_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.setenv("EXPLORE_SANDBOX", sandbox)
    repo = make_repo(tmp_path / "repo", PKG)
    start = git(repo, "rev-parse", "HEAD")
    edits = {
        "a": {"replace": {"pkg/_helpers.py": ["def", THROUGH_A_STRING + "def"]}, "confidence": 0.99},
        "b": {**HONEST, "confidence": 0.3},
        "c": {"replace": {"pkg/_helpers.py": ["def", THROUGH_A_VALUE + "def"]}, "confidence": 0.99},
    }
    code, summary, err = run(repo, tmp_path, edits)
    assert code == 0 and summary is not None, err
    iteration = summary["iterations"][0]
    a, b, c = (next(x for x in iteration["candidates"] if x["id"] == cid) for cid in "abc")
    assert a["status"] == "rejected" and "explore's record of the test calls was tampered with" in a["reason"], a
    assert c["status"] == "rejected" and "pkg/_helpers.py: `[sys][0].modules`" in c["reason"], c
    assert b["status"] == "ok" and b["pass_rate"] == 100.0, b
    assert iteration["winner"] == "b" and summary["final"]["pass_rate"] == 100.0
    assert git(repo, "diff", "--name-only", f"{start}..HEAD").split() == ["pkg/calc.py"]
    assert_no_debris(repo)
