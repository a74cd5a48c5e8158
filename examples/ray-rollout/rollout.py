"""A rollout loop on a Ray cluster with envhost's episode pool (docs/cluster.md#the-ray-pool).

Each episode is a slack workspace; a "policy" (here a stand-in that picks the next message from
what the episode's tools answered: put a model call there) acts on every episode at once, one
`pool.call_many` a step, keeping a checkpoint of every episode after each step so that a lost
node costs no episode. At the end each episode is scored from its data (`get()`), as a verifier
would.

    pip install dist/envhost-*.whl ray            # make wheel builds the wheel
    python examples/ray-rollout/rollout.py        # a local Ray; or RAY_ADDRESS=... for a cluster
    python examples/ray-rollout/rollout.py --episodes 1000 --steps 8 --slack path/to/slack.wasm
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import ray

from envhost.ray import EpisodePool

REPO = Path(__file__).resolve().parents[2]
SLACK = REPO / "guests" / "target" / "wasm32-wasip2" / "release" / "slack.wasm"
SEED = [{"kind": "data", "data": {"channels": [{"name": "general"}, {"name": "random"}]}}]


def policy(step: int, observation: str) -> dict:
    """The next action of one episode: a stand-in for a model reading `observation`."""
    channel = "general" if "general" in observation else "random"
    return {"channel": channel, "text": f"step {step}: seen {len(observation)} characters"}


def score(data: list[dict]) -> float:
    """A verifier: the share of the episode's messages posted to #general."""
    messages = data[0]["data"]["messages"]
    return sum(m["channel"] == "general" for m in messages) / max(1, len(messages))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--slack", type=Path, default=SLACK)
    args = parser.parse_args()

    ray.init(logging_level="ERROR")
    started = time.perf_counter()
    with EpisodePool({"slack": args.slack}, max_episodes=args.episodes + 1) as pool:
        episodes = pool.episodes(args.episodes, "slack", parts=SEED)
        observations = [r.text for r in pool.call_many([(e, "slack_list_channels", {}) for e in episodes])]
        for step in range(args.steps):
            actions = [(e, "slack_send_message", policy(step, o)) for e, o in zip(episodes, observations)]
            results = pool.call_many(actions, checkpoint=True)
            observations = [r.text for r in results]
        scores = [score(e.get()) for e in episodes]
        print(f"{args.episodes} episodes on {pool.actors} actor(s) {pool.episode_counts()}, {args.steps} steps "
              f"in {time.perf_counter() - started:.1f} s; mean score {sum(scores) / len(scores):.2f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
