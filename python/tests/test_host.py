"""The in-process API from Python (docs/python.md): episodes, the data plane, tools, extensions,
snapshots, forks and errors, against real components."""
from __future__ import annotations

import threading
import time

import pytest

import envhost
from conftest import GENERAL, SLACK, STATS_URI

SEND = "slack_send_message"


def test_the_readme_snippet_calls_a_slack_tool(host):
    with host.episode(parts=GENERAL) as episode:
        assert SEND in [tool["name"] for tool in episode.list_tools()]
        result = episode.call_tool(SEND, {"channel": "general", "text": "hi"})
        assert not result.is_error and result.structured == {"result": "ok"}
        data = episode.get()
        assert data[0]["kind"] == "data" and data[0]["data"]["messages"][0]["text"] == "hi"
    assert episode.closed


def test_list_tools_gives_mcp_entries(host):
    with host.episode("slack") as episode:
        tool = next(t for t in episode.list_tools() if t["name"] == SEND)
        assert tool["inputSchema"]["type"] == "object" and "channel" in tool["inputSchema"]["properties"]
        assert isinstance(tool["description"], str)


def test_the_data_plane_resets_and_adds(host):
    with host.episode("slack") as episode:
        episode.add(GENERAL)
        episode.add([{"kind": "data", "data": {"channels": [{"name": "random"}]}}])
        assert [c["name"] for c in episode.get()[0]["data"]["channels"]] == ["general", "random"]
        episode.reset()
        assert episode.get()[0]["data"]["channels"] == []


def test_tool_failures_are_results(host):
    with host.episode("slack", GENERAL) as episode:
        unknown = episode.call_tool("nope", {})
        assert unknown.is_error and unknown.error is None and "Unknown tool" in unknown.text
        missing = episode.call_tool(SEND, {"channel": "nowhere", "text": "x"})
        assert missing.is_error and missing.error["code"] == "channel_not_found"
        with pytest.raises(envhost.EnvhostError) as raised:
            missing.raise_for_error()
        assert raised.value.code == "channel_not_found" and raised.value.applied == "no"
        schema = episode.call_tool(SEND, {"channel": "general"})
        assert schema.is_error and "text" in schema.text
        assert missing.to_dict()["isError"] is True and missing.to_dict()["content"][0]["type"] == "text"


def test_errors_carry_their_coded_fields(host):
    with pytest.raises(envhost.EnvhostError) as unknown:
        host.episode("mail")
    assert unknown.value.code == "environment_not_found" and "slack" in unknown.value.message
    assert unknown.value.retryable is False and unknown.value.status == 404
    with pytest.raises(envhost.EnvhostError) as bad_parts:
        host.episode("slack", [{"kind": "nope"}])
    assert bad_parts.value.code == "invalid_params"
    with pytest.raises(envhost.EnvhostError) as not_json:
        host.episode("slack").call_tool(SEND, {"channel": object()})
    assert not_json.value.code == "invalid_params"
    for bad, says in [({"x": float("nan")}, "not a finite number"), ({"x": {1, 2}}, "a set is not a JSON value"),
                      ({1: "x"}, "a dict key is a int")]:
        with pytest.raises(envhost.EnvhostError) as refused:
            host.episode("slack").call_tool(SEND, bad)
        assert refused.value.code == "invalid_params" and says in refused.value.message, refused.value.message
    episode = host.episode("slack")
    episode.close()
    with pytest.raises(envhost.EnvhostError) as closed:
        episode.get()
    assert closed.value.code == "episode_not_found"


def test_the_episode_cap_is_retryable():
    small = envhost.Host({"slack": SLACK}, max_episodes=2)
    first, second = small.episode(), small.episode()
    with pytest.raises(envhost.EnvhostError) as full:
        small.episode()
    assert full.value.code == "too_many_episodes" and full.value.retryable is True
    first.close()
    small.episode().close()
    second.close()


def test_extensions_answer_json(host):
    with host.episode("slack", GENERAL) as episode:
        assert episode.call_extension(STATS_URI, "get") == {"channels": 1, "messages": 0}
        topic = episode.call_extension(STATS_URI, "set-topic", {"channel": "general", "topic": "chat"})
        assert topic["topic"] == "chat"
        with pytest.raises(envhost.EnvhostError) as missing:
            episode.call_extension(STATS_URI, "set-topic", {"channel": "nowhere", "topic": "x"})
        assert missing.value.code == "channel_not_found" and missing.value.status == 404
        with pytest.raises(envhost.EnvhostError) as unknown:
            episode.call_extension(STATS_URI, "nope")
        assert unknown.value.code == "extension_not_found"


def test_snapshots_restore_here_and_in_another_host(host):
    with host.episode("slack", GENERAL) as episode:
        episode.call_tool(SEND, {"channel": "general", "text": "before"})
        snapshot = episode.snapshot()
        episode.call_tool(SEND, {"channel": "general", "text": "after"})
        state = episode.get()
        restored = host.restore(snapshot)
        assert len(restored.get()[0]["data"]["messages"]) == 1
        again = host.restore(snapshot)
        assert again.get() == restored.get()
        other = envhost.Host({"slack": SLACK})
        moved = other.restore(bytes(snapshot))
        assert moved.get() == restored.get()
        assert other.restore(snapshot).get() == restored.get()
        forked = episode.fork()
        assert forked.get() == state and forked.id != episode.id
        forked.call_tool(SEND, {"channel": "general", "text": "fork only"})
        assert episode.get() == state
        with pytest.raises(envhost.EnvhostError) as bad:
            host.restore(b"not a snapshot")
        assert bad.value.code == "invalid_snapshot"


def test_a_spinning_guest_fails_its_own_call_and_holds_no_other_thread(host):
    spinning = host.episode("faulty")
    done = {}

    def spin():
        started = time.monotonic()
        done["result"] = spinning.call_tool("spin", {})
        done["took"] = time.monotonic() - started

    thread = threading.Thread(target=spin)
    thread.start()
    time.sleep(0.2)
    with host.episode("slack", GENERAL) as episode:
        started = time.monotonic()
        for _ in range(100):
            assert not episode.call_tool(SEND, {"channel": "general", "text": "hi"}).is_error
        quick = time.monotonic() - started
    thread.join()
    assert done["result"].is_error and "deadline" in done["result"].text.lower(), done["result"].text
    assert done["took"] >= 1.5
    assert quick < 1.0, f"100 calls took {quick:.2f} s while another thread's guest spun"
    spinning.close()


def test_call_many_answers_in_order_across_episodes(host):
    episodes = [host.episode("slack", GENERAL) for _ in range(8)]
    calls = [(episodes[i % 8], SEND, {"channel": "general", "text": str(i)}) for i in range(200)]
    calls.append((episodes[0], "nope", {}))
    results = host.call_many(calls, threads=3)
    assert len(results) == 201 and results[-1].is_error
    assert all(r.structured == {"result": "ok"} for r in results[:200])
    for i, episode in enumerate(episodes):
        texts = [m["text"] for m in episode.get()[0]["data"]["messages"]]
        assert texts == [str(n) for n in range(i, 200, 8)]
        episode.close()
    with pytest.raises(envhost.EnvhostError) as closed:
        host.call_many([(episodes[0], SEND, {})])
    assert closed.value.code == "episode_not_found"


def test_an_episode_nothing_refers_to_is_closed():
    small = envhost.Host({"slack": SLACK}, max_episodes=2)

    def rollout():
        small.episode().call_tool("slack_list_channels")

    for _ in range(5):
        rollout()
    assert small.episode_count == 0


def test_tool_access_changes_in_process(host):
    with host.episode("slack", GENERAL) as episode:
        purge = "slack_admin_purge"
        assert purge not in [t["name"] for t in episode.list_tools(role="admin")]
        refused = episode.call_tool(purge, {"channel": "general"}, role="admin")
        assert refused.is_error and refused.error["code"] == "permission_denied"
        rules = episode.enable_tools("admin", [purge])
        assert rules["role"] == "admin" and purge in rules["allowed"]
        assert purge in [t["name"] for t in episode.list_tools(role="admin")]
        assert purge not in [t["name"] for t in episode.list_tools(role="bob")]
        assert not episode.call_tool(purge, {"channel": "general"}, role="admin").is_error
        episode.disable_tools("*", "*")
        assert episode.list_tools(role="bob") == []
        with pytest.raises(envhost.EnvhostError) as bad:
            episode.enable_tools("admin", 5)
        assert bad.value.code == "invalid_params"


def test_host_options_that_do_not_fit_are_refused():
    for environments, options, says in [
        ({"slack": {"component": SLACK, "cardname": "x"}}, {}, 'unknown key "cardname"'),
        ({"slack": SLACK}, {"max_episodes": 0}, "max_episodes must be at least 1"),
        ({}, {}, "give at least one"),
    ]:
        with pytest.raises(envhost.EnvhostError) as refused:
            envhost.Host(environments, **options)
        assert refused.value.code == "invalid_params" and says in refused.value.message, refused.value.message


def test_an_agent_turn_without_a_model_fails_retryably():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    agents = envhost.Host({"slack": SLACK}, agents={"helper": SLACK.parent / "tool_agent.wasm"},
                          model_url=f"http://127.0.0.1:{closed}/v1")
    with agents.episode(parts=GENERAL) as episode:
        events = list(agents.invoke("helper", episode, "hi", session="s1"))
        assert events[-1]["type"] == "failed" and [e for e in events if e["type"] in ("completed", "failed")] == events[-1:]
        with pytest.raises(envhost.EnvhostError) as failed:
            agents.invoke("helper", episode, "again", session="s1").collect()
        assert failed.value.retryable is True and failed.value.code == events[-1]["code"]
        with pytest.raises(envhost.EnvhostError) as unknown:
            agents.invoke("nobody", episode, "hi")
        assert unknown.value.code == "agent_not_found"


def test_a_tool_result_pickles_whole(host):
    import pickle

    with host.episode(parts=GENERAL) as episode:
        ok = episode.call_tool(SEND, {"channel": "general", "text": "hi"})
        failed = episode.call_tool(SEND, {"channel": "nowhere", "text": "x"})
    for result in (ok, failed):
        copy = pickle.loads(pickle.dumps(result))
        assert type(copy) is envhost.ToolResult
        assert copy.to_dict() == result.to_dict() and copy.error == result.error
    with pytest.raises(envhost.EnvhostError) as raised:
        pickle.loads(pickle.dumps(failed)).raise_for_error()
    assert raised.value.code == failed.error["code"]
    with pytest.raises(envhost.EnvhostError) as raised:
        envhost._envhost._tool_result(b"{}")
    assert raised.value.code == "invalid_params"
