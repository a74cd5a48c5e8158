"""Objects moved through grants, against a real S3 API on loopback (moto's server, over https
with a throwaway certificate authority envhost is told to trust with --ca-file), with grants
boto3 presigns: exports through a `write_namespace` grant (docs/protocol.md#exports), the exporter
guest's `data/get` uploading its objects, read back; and read grants in `data/add`
(docs/protocol.md#read-grants), checked for size and SHA-256. Every transfer error code is
produced, against moto or a loopback store that answers as each case needs."""
from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from agentenv_protocol import client as agentenv
from agentenv_protocol.transfers import WriteNamespaceGrant
from agentenv_protocol.types import uploaded_file_part, uploaded_object_path

from conftest import GUEST_RELEASE, McpSession, free_port, rpc, run
from object_store import BUCKET, MiB, Authority, authority, grant, s3, stored  # noqa: F401 -- fixtures

EXPORTER = GUEST_RELEASE / "exporter.wasm"


@pytest.fixture(scope="module")
def exporter(pool, authority):
    return pool.envhost(EXPORTER, "--ca-file", str(authority.ca_file), label="exporter")


def episode(server) -> str:
    response = httpx.post(server.url("/episodes"), json={}, timeout=30)
    assert response.status_code == 201, response.text
    return server.url(response.json()["url"].rstrip("/"))


def plan(base: str, objects: list[dict], report: bool = False) -> None:
    assert rpc(base, "data/add", {"parts": [{"kind": "data", "data": {"objects": objects, "report": report}}]}) \
        == {"jsonrpc": "2.0", "id": 1, "result": {}}


def export(base: str, namespace: dict) -> dict:
    return rpc(base, "data/get", {"write_namespace": namespace})


def report(base: str, namespace: dict) -> list[dict]:
    """The exporter's report of each upload: what it stored or the error it met."""
    answer = export(base, namespace)
    assert "result" in answer, answer
    return answer["result"]["parts"][-1]["data"]["uploads"]


# ------------------------------------------------------------------------------------- exports

def test_the_card_declares_data_objects_and_a_get_without_a_grant_is_plain(exporter):
    card = httpx.get(exporter.url("/.well-known/agent-env.json"), timeout=10).json()
    assert card["capabilities"]["extensions"] == [
        {"uri": "urn:agentenv:data-objects/v1",
         "description": "data/get takes a write_namespace grant and may upload its export under it.",
         "params": None, "required": None}]
    base = episode(exporter)
    plan(base, [{"path": "a.bin", "size": 3}])
    for params in ({}, {"write_namespace": None}):
        assert rpc(base, "data/get", params)["result"]["parts"][0]["kind"] == "data"


def test_an_export_uploads_through_the_agentenv_client_and_reads_back(exporter, s3):
    base = episode(exporter)
    objects = [{"path": "state/db.bin", "size": 300_000, "chunk": 70_000, "fill": 7},
               {"path": "empty.txt", "size": 0}]
    plan(base, objects)
    namespace = WriteNamespaceGrant.model_validate(grant(s3, "runs/one"))
    answer = run(agentenv.get_data(base, write_namespace=namespace))
    assert [p.model_dump(mode="json", exclude_none=True) for p in answer.parts] == [
        uploaded_file_part("state/db.bin", name="db.bin", mime_type="application/octet-stream")
        .model_dump(mode="json", exclude_none=True),
        uploaded_file_part("empty.txt", name="empty.txt", mime_type="application/octet-stream")
        .model_dump(mode="json", exclude_none=True)]
    assert uploaded_object_path(answer.parts[0]) == "state/db.bin"
    assert stored(s3, "runs/one/state/db.bin") == b"\x07" * 300_000
    assert stored(s3, "runs/one/empty.txt") == b""


def test_a_replay_of_an_export_does_not_upload_again(exporter, s3):
    base = episode(exporter)
    plan(base, [{"path": "once.bin", "size": 10, "fill": 1}])
    assert "result" in export(base, grant(s3, "runs/replay"))
    s3.delete_object(Bucket=BUCKET, Key="runs/replay/once.bin")
    fork = httpx.post(f"{base}/fork", timeout=30)
    assert fork.status_code == 201, fork.text
    forked = exporter.url(fork.json()["url"].rstrip("/"))
    with McpSession(forked) as session:
        assert session.call("exporter_exports")["content"][0]["text"] == "1"
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="runs/replay/").get("KeyCount") == 0


def test_a_200_mib_export_written_in_chunks_streams_without_holding_it(exporter, s3):
    base = episode(exporter)
    plan(base, [{"path": "warm.bin", "size": MiB, "chunk": MiB}])
    assert "result" in export(base, grant(s3, "runs/warm"))
    size = 200 * MiB
    plan(base, [{"path": "big.bin", "size": size, "chunk": MiB, "fill": 0x5A}])
    status = Path(f"/proc/{exporter.process.pid}/status")

    def rss() -> int:
        line = next(l for l in status.read_text().splitlines() if l.startswith("VmRSS:"))
        return int(line.split()[1]) * 1024

    before, peak, done = rss(), [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], rss())

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        answer = export(base, grant(s3, "runs/big"))
    finally:
        done.set()
        sampler.join()
    assert "result" in answer, answer
    head = s3.head_object(Bucket=BUCKET, Key="runs/big/big.bin")
    assert head["ContentLength"] == size
    print(f"200 MiB export: RSS {before / MiB:.1f} MiB before, peak {peak[0] / MiB:.1f} MiB")
    assert peak[0] - before < 32 * MiB, f"RSS grew {(peak[0] - before) / MiB:.1f} MiB"


def test_an_invalid_grant_is_refused_naming_its_fields_never_its_values(exporter, s3):
    base = episode(exporter)
    plan(base, [{"path": "a.bin", "size": 1}])
    namespace = grant(s3, "runs/bad")
    namespace["write"]["url"] = namespace["write"]["url"].replace("https://", "http://")
    namespace["max_objects"] = 0
    answer = export(base, namespace)
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["data"]["detail"] == \
        "write_namespace is not a valid namespace grant (max_objects, write.url)"
    assert "policy" not in json.dumps(answer) and "127.0.0.1" not in json.dumps(answer)
    assert rpc(base, "data/get", [1])["error"]["data"]["detail"] == "data/get takes its params by name"


# ------------------------------------------------------------------------------------- transfer errors

def test_the_grants_limits_are_the_references(exporter, s3):
    base = episode(exporter)
    plan(base, [{"path": "../out.bin", "size": 1},
                {"path": "big.bin", "size": 11},
                {"path": "a.bin", "size": 6}, {"path": "a.bin", "size": 6},
                {"path": "b.bin", "size": 10},
                {"path": "c.bin", "size": 1}], report=True)
    uploads = report(base, grant(s3, "runs/limits", max_objects=2, max_object_bytes=10, max_total_bytes=15))
    errors = [u.get("error") for u in uploads]
    assert errors == [
        {"code": "invalid_transfer", "message": "The namespace upload path is invalid.", "retryable": False},
        {"code": "transfer_too_large", "message": "The transfer exceeds its configured size limit.",
         "retryable": False},
        None, None,
        {"code": "transfer_too_large", "message": "The upload exceeds the namespace total-byte limit.",
         "retryable": False},
        None]
    plan(base, [{"path": "x.bin", "size": 1}, {"path": "y.bin", "size": 1}, {"path": "z.bin", "size": 1}],
         report=True)
    uploads = report(base, grant(s3, "runs/count", max_objects=2))
    assert uploads[2]["error"] == {"code": "transfer_too_large",
                                   "message": "The upload exceeds the namespace object limit.", "retryable": False}
    assert stored(s3, "runs/limits/a.bin") == b"\x00" * 6


def test_an_expired_grant_uploads_nothing(exporter, s3):
    base = episode(exporter)
    plan(base, [{"path": "late.bin", "size": 4}])
    answer = export(base, grant(s3, "runs/late", expires_in=-60))
    assert answer["error"]["code"] == -32000, answer
    assert "The object-transfer grant has expired." in answer["error"]["message"] + json.dumps(answer["error"])
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="runs/late/").get("KeyCount") == 0


class Store:
    """A loopback https store that answers every POST as `mode` says, counting them."""

    def __init__(self, authority: Authority) -> None:
        self.mode = "503"
        self.posts = 0
        self.elsewhere = socket.create_server(("127.0.0.1", 0))
        self.elsewhere.settimeout(0.1)
        store = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                store.posts += 1
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                if store.mode == "stall":
                    time.sleep(5)
                    return
                status, body, headers = {
                    "503": (503, b"busy", {}),
                    "stalled-400": (400, b"<Error><Code>RequestTimeout</Code></Error>", {}),
                    "403": (403, b"<Error><Code>AccessDenied</Code></Error>", {}),
                    "302": (302, b"", {"Location": f"https://127.0.0.1:{store.elsewhere.getsockname()[1]}/"}),
                }[store.mode]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = authority.server_context().wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}/bucket"

    def reached_elsewhere(self) -> bool:
        try:
            self.elsewhere.accept()[0].close()
            return True
        except TimeoutError:
            return False


@pytest.fixture(scope="module")
def store(authority):
    made = Store(authority)
    yield made
    made.server.shutdown()


@pytest.mark.parametrize("mode, code, message, attempts", [
    ("503", "transfer_unavailable", "The object store is temporarily unavailable.", 3),
    ("stalled-400", "transfer_unavailable", "The object store is temporarily unavailable.", 3),
    ("403", "transfer_rejected", "The object store rejected the transfer.", 1),
    ("302", "transfer_rejected", "The object store rejected the transfer.", 1),
])
def test_the_stores_answers_map_to_the_references_codes(exporter, s3, store, mode, code, message, attempts):
    base = episode(exporter)
    plan(base, [{"path": "x.bin", "size": 5}], report=True)
    store.mode, store.posts = mode, 0
    uploads = report(base, grant(s3, "runs/store", url=store.url))
    assert uploads == [{"path": "x.bin", "error": {"code": code, "message": message,
                                                   "retryable": code == "transfer_unavailable"}}]
    assert store.posts == attempts
    assert not store.reached_elsewhere(), "a redirect was followed"


def test_a_store_that_stalls_past_the_grant_times_out(exporter, s3, store):
    base = episode(exporter)
    plan(base, [{"path": "x.bin", "size": 5}], report=True)
    store.mode, store.posts = "stall", 0
    started = time.monotonic()
    uploads = report(base, grant(s3, "runs/stall", url=store.url, expires_in=2))
    assert uploads[0]["error"] == {"code": "transfer_timeout", "message": "The object transfer timed out.",
                                   "retryable": False}
    assert time.monotonic() - started < 10


def test_a_store_out_of_reach_is_unavailable_and_a_grant_url_never_reaches_the_log(exporter, s3):
    base = episode(exporter)
    plan(base, [{"path": "x.bin", "size": 5}], report=True)
    closed = free_port()
    uploads = report(base, grant(s3, "runs/closed", url=f"https://127.0.0.1:{closed}/bucket?X-Amz-Signature=abc"))
    assert uploads[0]["error"]["code"] == "transfer_unavailable"
    assert "X-Amz-Signature" not in exporter.log_tail(1_000_000)


# ------------------------------------------------------------------------------------- read grants

def read_part(s3, key: str, body: bytes, **overrides) -> dict:
    """A file part naming `key` through a read grant under the data-objects marker."""
    url = s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=600)
    expires_at = (datetime.now(timezone.utc) + timedelta(minutes=10)).isoformat().replace("+00:00", "Z")
    read = {"media_type": "text/plain", "max_bytes": 1024, "size_bytes": len(body),
            "sha256": hashlib.sha256(body).hexdigest(),
            "read": {"kind": "http-get", "url": url, "expires_at": expires_at}, **overrides}
    return {"kind": "file", "file": {"uri": "notes.txt", "name": "notes.txt"},
            "metadata": {"urn:agentenv:data-objects/v1": {"path": "notes.txt", "read": read}}}


def received(base: str) -> list[dict]:
    return rpc(base, "data/get", {})["result"]["parts"][0]["data"]["received"]


def test_a_read_grant_in_data_add_is_downloaded_and_checked(exporter, s3):
    body = b"hello through a grant"
    s3.put_object(Bucket=BUCKET, Key="seeds/notes.txt", Body=body)
    base = episode(exporter)
    assert rpc(base, "data/add", {"parts": [read_part(s3, "seeds/notes.txt", body)]}) \
        == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert received(base) == [{"name": "notes.txt", "size": len(body), "text": body.decode()}]


@pytest.mark.parametrize("overrides, message", [
    ({"size_bytes": 3}, "integrity_mismatch: The downloaded object size does not match its descriptor."),
    ({"sha256": "0" * 64}, "integrity_mismatch: The downloaded object checksum does not match its descriptor."),
    ({"max_bytes": 4, "size_bytes": None}, "transfer_too_large: The transfer exceeds its configured size limit."),
    ({"sha256": "XYZ"}, "the part's read grant is not a valid ReadObject"),
    ({"extra": 1}, "the part's read grant is not a valid ReadObject"),
])
def test_a_read_grant_that_does_not_hold_changes_nothing(exporter, s3, overrides, message):
    body = b"hello through a grant"
    s3.put_object(Bucket=BUCKET, Key="seeds/notes.txt", Body=body)
    base = episode(exporter)
    part = read_part(s3, "seeds/notes.txt", body, **overrides)
    if overrides.get("size_bytes", 0) is None:
        del part["metadata"]["urn:agentenv:data-objects/v1"]["read"]["size_bytes"]
        del part["metadata"]["urn:agentenv:data-objects/v1"]["read"]["sha256"]
    answer = rpc(base, "data/add", {"parts": [part]})
    assert answer["error"]["code"] == -32000, answer
    assert message in json.dumps(answer["error"]), answer
    assert "X-Amz" not in json.dumps(answer)
    assert received(base) == []
