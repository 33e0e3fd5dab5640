"""Interest and loan calculations."""


def simple_interest(principal, annual_rate, years):
    return principal * annual_rate * years


def compound_amount(principal, annual_rate, years, periods=12):
    """Balance after compounding `periods` times a year."""
    rate = annual_rate * periods
    n = years / periods
    return principal * (1 + rate) ** n


def monthly_payment(principal, annual_rate, months):
    if annual_rate == 0:
        return principal / months
    r = annual_rate / 12
    return principal * r / (1 - (1 + r) ** -months)


def total_interest(principal, annual_rate, months):
    return monthly_payment(principal, annual_rate, months) * months - principal
