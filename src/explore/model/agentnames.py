"""An agent label as a run writes it, and the one way to read it back.

A label names one generator (`mutate`), a fallback chain (`claude-code,mutate`: the next member
when one fails) or a fleet of slots, one per `--agent` (`claude-code,mutate + codex`: candidates
dealt to the slots in turn), each slot itself a generator or a chain. Whatever asks which
generators a label holds (does one read a hint, is mutate among them, a slot's record) reads it
here: a split on "," alone takes `mutate + codex` for one generator of that name."""

from __future__ import annotations

SLOTS = " + "
"""Between the slots of a fleet (`--agent` given several times)."""
CHAIN = ","
"""Between the members of a fallback chain (one `--agent A,B`)."""


def slots(label: str) -> list[str]:
    """The slots of a label, each a generator or a chain (one slot when it is no fleet)."""
    return [slot.strip() for slot in label.split(SLOTS) if slot.strip()]


def chain(slot: str) -> list[str]:
    """The members of one slot, in fallback order."""
    return [member.strip() for member in slot.split(CHAIN) if member.strip()]


def members(label: str) -> list[str]:
    """Every generator a label names, slots and chains alike, each once, in the order written."""
    return list(dict.fromkeys(member for slot in slots(label) for member in chain(slot)))
