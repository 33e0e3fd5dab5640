"""Retry helpers with exponential backoff (sleep is injectable)."""

RETRYABLE = {408, 429}


def backoff_delays(attempts, base=0.5, factor=3, cap=30.0):
    """Delay before each retry: base * factor ** n, capped."""
    return [min(cap, base * factor ** n) for n in range(attempts)]


def should_retry(status):
    return status in RETRYABLE or status >= 500


def retry_call(func, attempts=3, sleep=None):
    """Call func until it succeeds or attempts run out; re-raise the last error."""
    delays = backoff_delays(attempts - 1)
    for attempt in range(attempts):
        try:
            return func()
        except Exception:
            if attempt == attempts - 1:
                raise
            if sleep is not None:
                sleep(delays[attempt])
