"""Fixtures of the Python package's suite: the guests built under guests/ (make guests), loaded
by the installed `envhost` package."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / "guests" / "target" / "wasm32-wasip2" / "release"
SLACK = RELEASE / "slack.wasm"
COUNTER = RELEASE / "counter.wasm"
FAULTY = RELEASE / "faulty.wasm"
STATS_URI = "urn:example:slack-stats/v1"
GENERAL = [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]


@pytest.fixture(scope="session")
def host():
    """One host serving slack, counter and faulty (a 2 s CPU deadline per call)."""
    import envhost

    return envhost.Host({"slack": SLACK, "counter": str(COUNTER), "faulty": {"component": FAULTY}},
                        cpu_deadline_ms=2000, max_episodes=200)
