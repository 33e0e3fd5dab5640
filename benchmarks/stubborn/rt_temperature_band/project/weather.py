"""Temperature bands in Celsius."""


def band(celsius):
    if celsius <= 0:
        return "freezing"
    if celsius < 15:
        return "cold"
    if celsius <= 25:
        return "mild"
    return "hot"


def bands(readings):
    return [band(c) for c in readings]


def warmest(readings):
    return max(readings)
