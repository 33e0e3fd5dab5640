"""Rows of the form label,n1,n2,..."""

from fields import split_fields


def parse_numbers(line):
    parts = split_fields(line)
    return [int(p) for p in parts[0:] if p]


def row_total(line):
    return sum(parse_numbers(line))


def label(line):
    parts = line.split(",")
    return parts[0].strip()
