"""The Ray episode pool's throughput with one node and with two (docs/cluster.md#the-ray-pool):
a local Ray cluster on this machine (a head node with no CPU for actors, two worker nodes of one
CPU each), a pool on one worker node and then on both, alternating for several rounds. Each
round seeds EPISODES slack episodes and times STEPS steps, a step being one `pool.call_many`
of one `slack_send_message` per episode. Prints a Markdown table: calls/s per round, medians
with min-max, the ratio, and the machine's load.

    .venv/bin/python python/bench/ray_pool.py [--episodes 2000] [--steps 20] [--rounds 3]

Needs the wheel installed with Ray (make wheel; pip install dist/envhost-*.whl ray) and the
guests built.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import ray
from ray.cluster_utils import Cluster

from envhost.ray import EpisodePool

REPO = Path(__file__).resolve().parents[2]
SLACK = REPO / "guests" / "target" / "wasm32-wasip2" / "release" / "slack.wasm"
GENERAL = [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]
NODE = {"num_cpus": 1, "object_store_memory": 100 << 20}


def pool_calls_per_second(node_ids: list[str], episodes: int, steps: int) -> float:
    """Tool calls per second through a pool with one actor on each of `node_ids`."""
    with EpisodePool({"slack": SLACK}, node_ids=node_ids, max_episodes=episodes + 1) as pool:
        held = pool.episodes(episodes, "slack", parts=GENERAL)
        calls = [(e, "slack_send_message", {"channel": "general", "text": "hello"}) for e in held]
        pool.call_many(calls)
        started = time.perf_counter()
        for _ in range(steps):
            results = pool.call_many(calls)
        took = time.perf_counter() - started
        assert not any(r.is_error for r in results)
        return episodes * steps / took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "object_store_memory": 100 << 20, "include_dashboard": False})
    nodes = [cluster.add_node(**NODE) for _ in range(2)]
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    cluster.wait_for_nodes()
    try:
        one, two = [], []
        for _ in range(args.rounds):
            one.append(pool_calls_per_second([nodes[0].node_id], args.episodes, args.steps))
            two.append(pool_calls_per_second([n.node_id for n in nodes], args.episodes, args.steps))
    finally:
        ray.shutdown()
        cluster.shutdown()

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"

    ratios = [b / a for a, b in zip(one, two)]
    print(f"{args.episodes} slack episodes, {args.steps} steps of call_many per round, "
          f"{args.rounds} rounds; load {os.getloadavg()[0]:.2f}\n")
    print("| pool | calls/s, median (min–max) | per round |")
    print("|---|---|---|")
    print(f"| 1 node | {cell(one)} | {', '.join(f'{v:,.0f}' for v in one)} |")
    print(f"| 2 nodes | {cell(two)} | {', '.join(f'{v:,.0f}' for v in two)} |")
    print(f"| ratio | {statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f}) | "
          f"{', '.join(f'{r:.2f}' for r in ratios)} |")


if __name__ == "__main__":
    main()
