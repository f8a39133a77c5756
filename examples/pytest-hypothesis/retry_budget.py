"""Retry delays: doubling from a base delay, never more than a cap."""


def schedule(retries: int, base_ms: int, cap_ms: int) -> list[int]:
    """Return the delay in milliseconds before each of `retries` retries."""
    delays = []
    d = base_ms
    for _ in range(retries):
        d = min(d, cap_ms)
        delays.append(d)
        d *= 2
    return delays
