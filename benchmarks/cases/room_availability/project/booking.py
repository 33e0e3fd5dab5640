"""Hotel room booking helpers."""


def is_available(room, guests):
    return room["reserved"] and room["capacity"] >= guests


def available_rooms(rooms, guests):
    return sorted(r["name"] for r in rooms if is_available(r, guests))


def reserve(rooms, name, guests):
    for room in rooms:
        if room["name"] == name:
            if not is_available(room, guests):
                raise ValueError("room %s is not available" % name)
            room["reserved"] = True
            return room
    raise KeyError(name)


def occupancy(rooms):
    if not rooms:
        return 0.0
    return sum(1 for r in rooms if r["reserved"]) / len(rooms)
