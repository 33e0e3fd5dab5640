import pytest

from booking import available_rooms, is_available, reserve


def test_capacity_respected():
    room = {"name": "a", "capacity": 2, "reserved": False}
    assert is_available(room, 1) and is_available(room, 2)
    assert not is_available(room, 3)


def test_reserve_then_unavailable():
    rs = [{"name": "a", "capacity": 2, "reserved": False}]
    reserve(rs, "a", 2)
    assert rs[0]["reserved"]
    with pytest.raises(ValueError):
        reserve(rs, "a", 1)
    assert available_rooms(rs, 1) == []
