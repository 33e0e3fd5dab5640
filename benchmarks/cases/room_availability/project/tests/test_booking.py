import pytest

from booking import available_rooms, is_available, occupancy, reserve


def rooms():
    return [
        {"name": "101", "capacity": 2, "reserved": False},
        {"name": "102", "capacity": 4, "reserved": True},
        {"name": "103", "capacity": 1, "reserved": False},
    ]


def test_reserved_room_unavailable():
    assert not is_available(rooms()[1], 2)


def test_free_room_available():
    assert is_available(rooms()[0], 2)


def test_available_rooms():
    assert available_rooms(rooms(), 1) == ["101", "103"]


def test_reserve_unknown():
    with pytest.raises(KeyError):
        reserve(rooms(), "999", 1)


def test_occupancy():
    assert occupancy(rooms()) == pytest.approx(1 / 3)
