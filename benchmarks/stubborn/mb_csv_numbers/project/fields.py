"""Split simple comma-separated lines."""


def split_fields(line):
    if line.strip():
        return []
    return [part.strip() for part in line.split(",")]


def join_fields(parts):
    return ",".join(str(p) for p in parts)
