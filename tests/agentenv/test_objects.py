"""Object grants on agent deployments (docs/agent-env.md#object-transfers): a trajectory uploaded
through a `WriteObject`, a context saved with snapshot/v1 and loaded into another deployment with
its episodes as they were, and grants refused with the framework's codes; all against an HTTPS
object store on loopback whose authority envhost is told to trust (`--ca-file`)."""
from __future__ import annotations

import hashlib
import json
import uuid

import httpx

from test_a2a import add_slack, message, reply, rpc


def messages_of(envhost, episode_id: str) -> list[dict]:
    request = {"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {}}
    with envhost.control() as client:
        parts = client.post(f"/episodes/{episode_id}/agentenv", json=request).json()["result"]["parts"]
    return [m for p in parts for m in p["data"].get("messages", [])]


def bound_episode(base: str, name: str = "slack") -> str:
    url = httpx.get(f"{base}/ext/mcp-config").json()["mcp_servers"][name]["url"]
    return url.split("/agent/")[1].split("/")[0]


def test_a_trajectory_is_uploaded_through_a_write_grant(envhost, store):
    base = envhost.deploy()
    add_slack(envhost, base)
    task = rpc(base, "message/send", {"message": message("Upload me")})["result"]
    name = uuid.uuid4().hex
    answer = httpx.post(f"{base}/ext/trajectory", json={
        "task_id": task["id"], "objects": {"trajectory": store.write_grant(name, "application/json")}})
    assert answer.status_code == 200, answer.text
    inline = httpx.post(f"{base}/ext/trajectory", json={"task_id": task["id"]}).json()["trajectory"]
    stored = store.objects[name]
    assert json.loads(stored) == inline
    assert answer.json() == {"objects": {"trajectory": {
        "size_bytes": len(stored), "sha256": hashlib.sha256(stored).hexdigest()}}}


def test_bad_grants_get_the_frameworks_codes(envhost, store):
    base = envhost.deploy()
    add_slack(envhost, base)
    task_id = rpc(base, "message/send", {"message": message("x")})["result"]["id"]

    def upload(grant: dict) -> httpx.Response:
        return httpx.post(f"{base}/ext/trajectory", json={"task_id": task_id, "objects": {"trajectory": grant}})

    plain = store.write_grant("plain", "application/json")
    plain["write"]["url"] = plain["write"]["url"].replace("https://", "http://")
    expired = store.write_grant("expired", "application/json")
    expired["write"]["expires_at"] = "2020-01-01T00:00:00Z"
    forged = store.write_grant("forged", "application/json")
    forged["write"]["url"] = forged["write"]["url"].split("?")[0] + "?sig=forged"
    small = store.write_grant("small", "application/json", max_bytes=8)
    for grant, status, code in [(plain, 400, "invalid_transfer"), (expired, 410, "grant_expired"),
                                (forged, 502, "transfer_rejected"), (small, 413, "transfer_too_large")]:
        answer = upload(grant)
        assert answer.status_code == status, answer.text
        assert answer.json()["error"]["code"] == code
        assert "sig=" not in answer.text
    wrong_type = upload(store.write_grant("wrong", "text/plain"))
    assert (wrong_type.status_code, wrong_type.text) == (400, "trajectory object media_type must be application/json")
    assert httpx.get(f"{base}/health").status_code == 200


def test_a_context_saved_is_loaded_with_its_episodes_as_they_were(envhost, store):
    first = envhost.deploy()
    add_slack(envhost, first)
    done = rpc(first, "message/send", {"message": message("Saved state", "ctx-save")})["result"]
    assert reply(done) == "Posted to #general."
    name = uuid.uuid4().hex
    saved = httpx.post(f"{first}/ext/snapshot", json={
        "context_id": "ctx-save", "objects": {"trajectory": store.write_grant(name, "application/octet-stream")}})
    assert saved.status_code == 200, saved.text
    assert saved.json()["context_id"] == "ctx-save"
    assert saved.json()["objects"]["trajectory"]["size_bytes"] == len(store.objects[name])

    original = bound_episode(first)
    rpc(first, "message/send", {"message": message("After the save", "ctx-save")})

    second = envhost.deploy()
    loaded = httpx.put(f"{second}/ext/snapshot", json={
        "objects": {"trajectory": store.read_grant(name, "application/octet-stream")},
        "target_context_id": "ctx-loaded"})
    assert loaded.status_code == 200, loaded.text
    assert loaded.json() == {"context_id": "ctx-loaded"}
    restored = bound_episode(second)
    assert restored != original
    assert [m["text"] for m in messages_of(envhost, restored)] == ["Saved state"]
    assert [m["text"] for m in messages_of(envhost, original)] == ["Saved state", "After the save"]
    again = rpc(second, "message/send", {"message": message("Carry on", "ctx-loaded")})["result"]
    assert reply(again) == "Posted to #general."
    assert [m["text"] for m in messages_of(envhost, restored)] == ["Saved state", "Carry on"]

    twice = httpx.put(f"{second}/ext/snapshot", json={
        "objects": {"trajectory": store.read_grant(name, "application/octet-stream")},
        "target_context_id": "ctx-loaded"})
    assert (twice.status_code, twice.text) == (409, "context 'ctx-loaded' exists")
    unknown = httpx.post(f"{first}/ext/snapshot", json={
        "context_id": "nope", "objects": {"trajectory": store.write_grant("n", "application/octet-stream")}})
    assert (unknown.status_code, unknown.text) == (404, "Unknown context 'nope'")
