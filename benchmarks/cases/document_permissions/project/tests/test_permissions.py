from permissions import can_edit, can_view, visible_docs

ALICE = {"name": "alice", "admin": False}
ROOT = {"name": "root", "admin": True}


def doc(owner="alice", public=False, locked=False, title="t"):
    return {"owner": owner, "public": public, "locked": locked, "title": title}


def test_public_visible():
    assert can_view({"name": "bob", "admin": False}, doc(public=True))


def test_private_hidden():
    assert not can_view({"name": "bob", "admin": False}, doc())


def test_admin_edits_locked():
    assert can_edit(ROOT, doc(locked=True))


def test_owner_edits_unlocked():
    assert can_edit(ALICE, doc())


def test_visible_docs():
    docs = [doc(title="a"), doc(owner="bob", title="b"), doc(owner="bob", public=True, title="c")]
    assert visible_docs(ALICE, docs) == ["a", "c"]
