import itertools

from permissions import can_edit, editable_docs


def test_truth_table():
    for admin, owner, locked in itertools.product([False, True], repeat=3):
        user = {"name": "u", "admin": admin}
        d = {"owner": "u" if owner else "v", "public": False, "locked": locked, "title": "x"}
        assert can_edit(user, d) == (admin or (owner and not locked)), (admin, owner, locked)


def test_editable_docs():
    user = {"name": "u", "admin": False}
    docs = [
        {"owner": "u", "public": False, "locked": False, "title": "mine"},
        {"owner": "u", "public": False, "locked": True, "title": "locked"},
        {"owner": "v", "public": True, "locked": False, "title": "theirs"},
    ]
    assert editable_docs(user, docs) == ["mine"]
