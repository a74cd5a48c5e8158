"""The runnable examples under examples/ that use the Python package run as their docstrings
say."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_the_ray_rollout_example_runs_and_scores():
    pytest.importorskip("ray")
    done = subprocess.run([sys.executable, str(REPO / "examples" / "ray-rollout" / "rollout.py"),
                           "--episodes", "20", "--steps", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "20 episodes on" in done.stdout and "mean score" in done.stdout, done.stdout
