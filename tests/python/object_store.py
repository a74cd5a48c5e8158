"""A real S3 API on loopback for the tests that move objects through grants: moto's server (PyPI
`moto[s3,server]`) over https with a throwaway certificate authority (PyPI `trustme`) that envhost
is told to trust with --ca-file, and `write_namespace` grants presigned with boto3 as agent-env
makes them (docs/protocol.md#exports)."""
from __future__ import annotations

import ssl
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import boto3
import httpx
import pytest
import trustme

from conftest import free_port

BUCKET = "exports"
MiB = 1 << 20


class Authority:
    """A throwaway certificate authority and the loopback certificate it issued."""

    def __init__(self, directory: Path) -> None:
        ca = trustme.CA()
        issued = ca.issue_cert("127.0.0.1", "localhost")
        self.ca_file = directory / "ca.pem"
        self.cert_file = directory / "cert.pem"
        self.key_file = directory / "key.pem"
        ca.cert_pem.write_to_path(str(self.ca_file))
        issued.cert_chain_pems[0].write_to_path(str(self.cert_file))
        issued.private_key_pem.write_to_path(str(self.key_file))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


@pytest.fixture(scope="module")
def authority(tmp_path_factory) -> Authority:
    return Authority(tmp_path_factory.mktemp("authority"))


@pytest.fixture(scope="module")
def s3(authority):
    """moto's S3 server over https on loopback, and a boto3 client of it with the bucket made."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port),
         "-c", str(authority.cert_file), "-k", str(authority.key_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"https://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(endpoint, verify=str(authority.ca_file), timeout=2)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline and process.poll() is None, "moto's server did not start"
            time.sleep(0.1)
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", verify=str(authority.ca_file),
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    client.create_bucket(Bucket=BUCKET)
    yield client
    process.terminate()
    process.wait(timeout=10)


def grant(s3, root: str, *, max_objects: int = 10, max_object_bytes: int = 512 * MiB,
          max_total_bytes: int = 1024 * MiB, expires_in: float = 600, url: str | None = None) -> dict:
    """A `write_namespace` grant under `root` of the bucket, as agent-env makes one from S3: a
    presigned POST policy whose key must start with the root."""
    post = s3.generate_presigned_post(Bucket=BUCKET, Key=f"{root}/${{filename}}",
                                      Conditions=[["starts-with", "$key", f"{root}/"]], ExpiresIn=600)
    expires_at = datetime.now(timezone.utc) + timedelta(seconds=expires_in)
    return {"root_path": root, "expires_at": expires_at.isoformat().replace("+00:00", "Z"),
            "max_objects": max_objects, "max_object_bytes": max_object_bytes,
            "max_total_bytes": max_total_bytes,
            "write": {"kind": "http-post-policy", "url": url or post["url"], "fields": post["fields"],
                      "path_field": "key", "file_field": "file"}}


def stored(s3, key: str) -> bytes:
    return s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
