"""Paging through a list of results."""


def pages(total, per_page):
    """How many pages the results fill (the last one may be partly full)."""
    if total <= 0:
        return 1
    return (total + per_page) // per_page


def page_slice(items, page, per_page):
    start = (page - 1) * per_page
    return items[start:start + per_page]


def page_label(page, total, per_page):
    return f"page {page} of {pages(total, per_page)}"
