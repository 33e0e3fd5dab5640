"""Fixed-width record parsing (column positions are 1-based and inclusive)."""

LAYOUT = [("id", 1, 4), ("name", 5, 14), ("qty", 15, 18)]


def field(line, start, end):
    """Characters in columns start..end (1-based, inclusive), stripped."""
    begin = start
    stop = end + 1
    return line[begin:stop].strip()


def parse_record(line, layout=LAYOUT):
    record = {name: field(line, start, end) for name, start, end in layout}
    record["qty"] = int(record["qty"] or 0)
    return record


def format_record(record, layout=LAYOUT):
    out = ""
    for name, start, end in layout:
        out += str(record[name]).ljust(end - start + 1)[: end - start + 1]
    return out


def parse_file(text, layout=LAYOUT):
    return [parse_record(line, layout) for line in text.splitlines() if line.strip()]
