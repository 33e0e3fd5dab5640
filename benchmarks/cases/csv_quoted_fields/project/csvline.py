"""A tiny CSV line splitter supporting double-quoted fields."""


def split_line(line, sep=","):
    fields = []
    buf = []
    in_quotes = False
    for ch in line:
        if ch == '"':
            in_quotes = not in_quotes
            buf = []
        elif ch == sep and not in_quotes:
            fields.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    fields.append("".join(buf))
    return fields


def quote(field, sep=","):
    if sep in field or '"' in field:
        return '"' + field.replace('"', "") + '"'
    return field


def join_line(fields, sep=","):
    return sep.join(quote(f, sep) for f in fields)


def parse(text, sep=","):
    lines = [l for l in text.splitlines() if l.strip()]
    header = split_line(lines[0], sep)
    return [dict(zip(header, split_line(l, sep))) for l in lines[1:]]
