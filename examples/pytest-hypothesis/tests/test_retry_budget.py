"""Property: retry delays stay within the fixture's limits."""

import json
import pathlib

from hypothesis import given, strategies as st

from retry_budget import schedule

LIMITS = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "retry.json").read_text()
)


@given(
    retries=st.integers(min_value=0, max_value=LIMITS["max_retries"]),
    base_ms=st.integers(min_value=1, max_value=LIMITS["cap_ms"]),
)
def test_delays_within_cap_and_monotonic(retries, base_ms):
    delays = schedule(retries, base_ms, LIMITS["cap_ms"])
    assert len(delays) == retries
    for i, d in enumerate(delays):
        assert 0 < d <= LIMITS["cap_ms"], f"delay {i} is {d}"
        if i:
            assert d >= delays[i - 1], f"delay {i} shrinks"
