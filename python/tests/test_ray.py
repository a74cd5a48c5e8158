"""The episode pool on a real local Ray cluster (docs/cluster.md#the-ray-pool): a head node
with no CPU for actors and three worker nodes of one CPU each, all processes on this machine;
a node is killed mid-run and the pool's checkpointed episodes come back on the others."""
from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

import envhost  # noqa: E402
from envhost.ray import EpisodePool  # noqa: E402
from conftest import COUNTER, GENERAL, SLACK  # noqa: E402

SEND = "slack_send_message"
NODE = {"num_cpus": 1, "object_store_memory": 80 << 20}


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "object_store_memory": 120 << 20, "include_dashboard": False,
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 3},
    })
    workers = [cluster.add_node(**NODE) for _ in range(3)]
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    cluster.wait_for_nodes()
    yield cluster, workers
    ray.shutdown()
    cluster.shutdown()


def sends(episodes, tag):
    return [(episode, SEND, {"channel": "general", "text": f"{tag}-{i}"}) for i, episode in enumerate(episodes)]


def texts(data):
    return [message["text"] for message in data[0]["data"]["messages"]]


def test_pool_places_episodes_by_load_and_answers_as_in_process(cluster):
    with EpisodePool({"slack": SLACK, "counter": COUNTER}, max_episodes=100) as pool:
        assert pool.actors == 3 and len(set(pool.node_ids)) == 3
        episodes = [pool.episode("slack", parts=GENERAL) for _ in range(6)]
        assert pool.episode_counts() == [2, 2, 2]
        result = episodes[0].call_tool(SEND, {"channel": "general", "text": "hi"})
        assert isinstance(result, envhost.ToolResult) and not result.is_error
        assert result.structured == {"result": "ok"}
        assert texts(episodes[0].get()) == ["hi"]
        assert SEND in [tool["name"] for tool in episodes[0].list_tools()]
        failed = episodes[0].call_tool(SEND, {"channel": "nowhere", "text": "x"})
        assert failed.is_error
        with pytest.raises(envhost.EnvhostError) as raised:
            failed.raise_for_error()
        assert raised.value.code
        fork = episodes[0].fork()
        assert fork.node_id == episodes[0].node_id and texts(fork.get()) == ["hi"]
        restored = pool.restore(episodes[0].snapshot())
        assert texts(restored.get()) == ["hi"]
        with pytest.raises(envhost.EnvhostError) as raised:
            pool.episode("nonexistent")
        assert raised.value.code == "environment_not_found" and raised.value.status == 404
        episodes[1].close()
        episodes[1].close()
        with pytest.raises(envhost.EnvhostError) as raised:
            episodes[1].get()
        assert raised.value.code == "episode_not_found"


def test_call_many_keeps_order_across_actors(cluster):
    with EpisodePool({"slack": SLACK}, max_episodes=100) as pool:
        episodes = pool.episodes(30, "slack", parts=GENERAL)
        assert sorted(pool.episode_counts()) == [10, 10, 10]
        calls = sends(episodes, "a") + sends(episodes, "b")
        results = pool.call_many(calls)
        assert len(results) == 60 and not any(r.is_error for r in results)
        for i, episode in enumerate(episodes):
            assert texts(episode.get()) == [f"a-{i}", f"b-{i}"]


def test_a_pool_that_cannot_start_says_why(cluster, tmp_path):
    not_a_component = tmp_path / "notes.wasm"
    not_a_component.write_bytes(b"not WebAssembly")
    with pytest.raises(envhost.EnvhostError) as refused:
        EpisodePool({"slack": not_a_component})
    assert refused.value.code == "load_failed" and str(not_a_component) in refused.value.message
    with EpisodePool({"slack": SLACK}, max_episodes=10) as holding:
        with pytest.raises(envhost.EnvhostError) as unplaced:
            EpisodePool({"slack": SLACK}, start_timeout_s=2)
        assert unplaced.value.code == "actors_unplaced" and unplaced.value.retryable
        assert holding.episode().environment == "slack"
        kept = holding.episode("slack")
    with pytest.raises(envhost.EnvhostError) as lost:
        kept.get()
    assert lost.value.code == "episode_lost" and "shut down" in lost.value.message


def test_3000_episodes_survive_the_loss_of_a_node(cluster):
    cluster_, workers = cluster
    with EpisodePool({"slack": SLACK}, max_episodes=2000) as pool:
        episodes = pool.episodes(3000, "slack", parts=GENERAL)
        assert sorted(pool.episode_counts()) == [1000, 1000, 1000]
        assert not any(r.is_error for r in pool.call_many(sends(episodes, "one"), checkpoint=True))
        assert all(episode.durable for episode in episodes)
        unmarked = pool.episodes(3, "slack", parts=GENERAL)
        before = {episode: episode.get() for episode in episodes}

        doomed_node = workers[1]
        doomed = [e for e in episodes if e.node_id == doomed_node.node_id]
        doomed_unmarked = [e for e in unmarked if e.node_id == doomed_node.node_id]
        assert len(doomed) == 1000 and len(doomed_unmarked) == 1
        cluster_.remove_node(doomed_node)

        for episode in doomed:
            assert episode.get() == before[episode]
        assert all(episode.node_id != doomed_node.node_id for episode in doomed)
        results = pool.call_many(sends(episodes, "two"))
        assert not any(r.is_error for r in results)
        assert pool.actors == 2 and doomed_node.node_id not in pool.node_ids
        assert sorted(pool.episode_counts()) == [1501, 1501]
        for i, episode in enumerate(episodes):
            assert texts(episode.get()) == [f"one-{i}", f"two-{i}"]
        restored_one = pool.restore(episodes[1].snapshot())
        assert texts(restored_one.get()) == ["one-1", "two-1"]

        with pytest.raises(envhost.EnvhostError) as raised:
            doomed_unmarked[0].get()
        assert raised.value.code == "episode_lost" and raised.value.status == 410


def test_a_restored_episode_answers_as_at_its_checkpoint(cluster):
    cluster_, workers = cluster
    with EpisodePool({"slack": SLACK}, max_episodes=100) as pool:
        episodes = pool.episodes(2 * pool.actors, "slack", parts=GENERAL)
        for i, episode in enumerate(episodes):
            episode.call_tool(SEND, {"channel": "general", "text": f"kept-{i}"}, checkpoint=True)
            episode.call_tool(SEND, {"channel": "general", "text": f"after-{i}"})
        kept = {episode: episode.get() for episode in episodes}
        victim = next(w for w in workers if w.node_id in pool.node_ids)
        on_victim = [e for e in episodes if e.node_id == victim.node_id]
        cluster_.remove_node(victim)
        for episode in on_victim:
            assert texts(episode.get()) == [f"kept-{episodes.index(episode)}"]
            assert episode.node_id != victim.node_id
        for episode in episodes:
            if episode not in on_victim:
                assert episode.get() == kept[episode]


def test_an_agent_turn_runs_on_the_episode_actor(cluster, tmp_path):
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parents[2] / "tools" / "scripted-model.py"),
                              "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and model.poll() is None, "the scripted model did not start"
            time.sleep(0.05)
        with EpisodePool({"slack": SLACK}, agents={"helper": SLACK.parent / "tool_agent.wasm"},
                         model_url=f"http://127.0.0.1:{port}/v1", max_episodes=20) as pool:
            episode = pool.episode("slack", parts=GENERAL)
            answer = pool.invoke("helper", episode, "hello from the pool", session="s1")
            assert answer["text"] == "Posted to #general."
            assert texts(episode.get()) == ["hello from the pool"]
            with pytest.raises(envhost.EnvhostError) as unknown:
                pool.invoke("nobody", episode, "hi")
            assert unknown.value.code == "agent_not_found"
    finally:
        model.terminate()
        model.wait(timeout=10)
