"""Snapshots, forks and restores over HTTP, with the real clients on the episodes they make: a
fork answers data/get byte for byte like its original, and a snapshot downloaded from one envhost
process restores in another into a byte-identical data/get."""
from __future__ import annotations

import json
import time

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from conftest import FAULTY_WASM, data_part, rpc, run

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

CHANNELS = [{"name": "general"}, {"name": "random"}]


def create(server) -> str:
    response = httpx.post(server.url("/episodes"), json={"environment": "slack"}, timeout=30)
    assert response.status_code == 201, response.text
    return server.url(response.json()["url"].rstrip("/"))


def raw_get(base: str) -> bytes:
    """The data/get answer, as its bytes on the wire."""
    response = httpx.post(f"{base}/agentenv", json={"jsonrpc": "2.0", "id": 1, "method": "data/get"},
                          timeout=30)
    assert response.status_code == 200, response.text
    assert "result" in response.json(), response.text
    return response.content


async def send_messages(base: str, texts: list[str]) -> None:
    async with streamablehttp_client(f"{base}/mcp", headers={"AgentEnv-Role": "alice"}) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for text in texts:
                result = await session.call_tool("slack_send_message", {"channel": "general", "text": text})
                assert not result.isError, result


def seeded(server, messages: int) -> str:
    base = create(server)
    assert rpc(base, "data/add", {"parts": [data_part(CHANNELS)]}).get("result") == {}
    run(send_messages(base, [f"message {i}" for i in range(messages)]))
    return base


@pytest.fixture(scope="module")
def second_slack(pool, envhost_server):
    return pool.slack(envhost_server.implementation, label="envhost-slack-second")


@pytest.fixture(scope="module")
def faulty_only(pool):
    return pool.envhost(FAULTY_WASM, label="envhost-faulty-only")


def test_a_fork_answers_data_get_byte_for_byte_and_then_goes_its_own_way(envhost_server):
    original = seeded(envhost_server, 30)
    response = httpx.post(f"{original}/fork", timeout=30)
    assert response.status_code == 201, response.text
    answer = response.json()
    assert set(answer) == {"id", "environment", "url", "agent_url", "mcp_url", "snapshot"}
    fork = envhost_server.url(answer["url"].rstrip("/"))
    assert raw_get(fork) == raw_get(original)

    run(send_messages(fork, ["only in the fork"]))
    run(send_messages(original, ["only in the original"]))
    assert b"only in the fork" in raw_get(fork) and b"only in the original" not in raw_get(fork)
    assert b"only in the original" in raw_get(original) and b"only in the fork" not in raw_get(original)


def test_a_snapshot_restores_in_another_process_into_an_identical_data_get(envhost_server, second_slack):
    original = seeded(envhost_server, 25)
    taken = httpx.post(f"{original}/snapshot", timeout=30)
    assert taken.status_code == 201, taken.text
    file = httpx.get(envhost_server.url(taken.json()["url"]), timeout=30)
    assert file.status_code == 200 and file.headers["content-type"] == "application/json"
    snapshot = file.json()
    assert (snapshot["format"], snapshot["version"]) == ("envhost-snapshot", 3)
    assert snapshot["environment"]["digest"].startswith("sha256:")

    uploaded = httpx.post(second_slack.url("/snapshots"), content=file.content, timeout=30)
    assert uploaded.status_code == 201, uploaded.text
    restored = httpx.post(second_slack.url(f"/snapshots/{uploaded.json()['snapshot']}/episodes"), timeout=30)
    assert restored.status_code == 201, restored.text
    assert raw_get(second_slack.url(restored.json()["url"].rstrip("/"))) == raw_get(original)


def metric(server, name: str) -> int:
    metrics = httpx.get(server.url("/metrics"), timeout=30).text
    line = next(l for l in metrics.splitlines() if l.startswith(name + " "))
    return int(float(line.split()[-1]))


def test_later_restores_instantiate_the_image_the_first_one_started(envhost_server):
    """The first restore replays and starts making the snapshot's image; once it is made, restores
    instantiate it. A component wasmtime-wizer cannot pre-initialise (slack-js: nested components)
    has none, and its restores replay: either way, every restore answers like the original."""
    original = seeded(envhost_server, 40)
    snapshot = httpx.post(f"{original}/snapshot", timeout=30).json()["snapshot"]
    made, unsupported = (f'envhost_snapshot_images_total{{outcome="{o}"}}' for o in ("made", "unsupported"))
    images = metric(envhost_server, made) + metric(envhost_server, unsupported)
    from_images = metric(envhost_server, 'envhost_restores_total{from="image"}')

    def restore() -> str:
        response = httpx.post(envhost_server.url(f"/snapshots/{snapshot}/episodes"), timeout=60)
        assert response.status_code == 201, response.text
        return envhost_server.url(response.json()["url"].rstrip("/"))

    restored = [restore()]
    deadline = time.monotonic() + 180
    while metric(envhost_server, made) + metric(envhost_server, unsupported) == images:
        assert time.monotonic() < deadline, "making the image took over 180 s"
        time.sleep(0.05)
    imaged = envhost_server.implementation != "slack-js"
    assert (metric(envhost_server, unsupported) == 0) == imaged
    restored += [restore(), restore()]
    assert metric(envhost_server, 'envhost_restores_total{from="image"}') == from_images + (2 if imaged else 0)
    for base in restored:
        assert raw_get(base) == raw_get(original)
    run(send_messages(restored[1], ["only in the second restore"]))
    assert b"only in the second restore" in raw_get(restored[1])
    assert raw_get(restored[2]) == raw_get(original)


def test_snapshots_are_listed_and_deleted(envhost_server):
    base = seeded(envhost_server, 1)
    snapshot = httpx.post(f"{base}/snapshot", timeout=30).json()["snapshot"]
    listed = httpx.get(envhost_server.url("/snapshots"), timeout=30).json()["snapshots"]
    assert snapshot in [s["snapshot"] for s in listed]
    assert httpx.delete(envhost_server.url(f"/snapshots/{snapshot}"), timeout=30).status_code == 200
    missing = httpx.get(envhost_server.url(f"/snapshots/{snapshot}"), timeout=30)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "snapshot_not_found"


def test_a_snapshot_of_another_component_is_refused(envhost_server, faulty_only):
    base = seeded(envhost_server, 1)
    url = httpx.post(f"{base}/snapshot", timeout=30).json()["url"]
    file = httpx.get(envhost_server.url(url), timeout=30).content
    refused = httpx.post(faulty_only.url("/snapshots"), content=file, timeout=30)
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "component_mismatch" and json.loads(file)["environment"]["digest"] in error["message"]


def test_a_tampered_journal_is_refused_naming_the_call(envhost_server):
    base = seeded(envhost_server, 3)
    url = httpx.post(f"{base}/snapshot", timeout=30).json()["url"]
    snapshot = httpx.get(envhost_server.url(url), timeout=30).json()
    snapshot["journal"][2]["answer"] = "00" * 32
    uploaded = httpx.post(envhost_server.url("/snapshots"), json=snapshot, timeout=30)
    assert uploaded.status_code == 201, uploaded.text
    restored = httpx.post(envhost_server.url(f"/snapshots/{uploaded.json()['snapshot']}/episodes"), timeout=30)
    assert restored.status_code == 409, restored.text
    error = restored.json()["error"]
    assert error["code"] == "replay_diverged"
    assert "journal entry 2" in error["message"] and "send_message" in error["message"]


def test_a_file_that_is_not_a_snapshot_is_refused(envhost_server):
    for body in [b"{", b"[]", json.dumps({"format": "envhost-snapshot", "version": 2}).encode()]:
        refused = httpx.post(envhost_server.url("/snapshots"), content=body, timeout=30)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "invalid_snapshot"
