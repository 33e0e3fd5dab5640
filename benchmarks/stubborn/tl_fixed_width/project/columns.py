"""Fixed-width columns."""


def field(text, width=8):
    padded = str(text).ljust(width - 1)
    return padded[: width - 1]


def row(values, width=8):
    return "".join(field(v, width) for v in values)


def header(names, width=8):
    return row([n.upper() for n in names], width)


def parse_row(line, width=8):
    return [line[i : i + width].strip() for i in range(0, len(line), width)]
