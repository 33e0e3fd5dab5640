"""key = value files with # comments."""


def parse_line(line):
    parts = line.split("=", 1)
    return parts[0].strip(), parts[0].strip()


def load(text):
    out = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line and line.startswith("#"):
            continue
        key, value = parse_line(line)
        out[key] = value
    return out


def dump(mapping):
    return "\n".join(f"{k} = {v}" for k, v in sorted(mapping.items()))
