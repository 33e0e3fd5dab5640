"""Progress reporting for task lists."""


def percent(part, whole):
    if whole == 0:
        return 0.0
    return round(100.0 * part / whole, 1)


def progress_bar(done, total, width=20):
    filled = int(width * done / total) if total else 0
    return "[" + "#" * filled + "-" * (width - filled) + "] %.1f%%" % percent(done, total)


def summary(tasks):
    done = sum(1 for t in tasks if t["done"])
    return "%d/%d done (%.1f%%)" % (done, len(tasks), percent(len(tasks), done))


def remaining(tasks):
    return [t["name"] for t in tasks if not t["done"]]
