"""Who may see and change documents."""


def is_owner(user, doc):
    return doc["owner"] == user["name"]


def can_view(user, doc):
    return doc["public"] or user["admin"] or is_owner(user, doc)


def can_edit(user, doc):
    """Admins can always edit; owners can edit unless the document is locked."""
    return user["admin"] and (is_owner(user, doc) and not doc["locked"])


def visible_docs(user, docs):
    return [d["title"] for d in docs if can_view(user, d)]


def editable_docs(user, docs):
    return [d["title"] for d in docs if can_edit(user, d)]
