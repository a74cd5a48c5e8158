"""An object store on loopback for the suite: HTTPS with a throwaway certificate authority
(PyPI trustme), objects kept in memory, each request allowed only with the `sig` query its
grant carries (what a presigned URL is to a real store). `grants` makes the framework's
`WriteObject` and `ReadObject` for one object name."""
from __future__ import annotations

import hashlib
import secrets
import ssl
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import trustme


class ObjectStore:
    """A running store: `ca_file` is the authority envhost must trust (`--ca-file`)."""

    def __init__(self, folder: Path) -> None:
        self.authority = trustme.CA()
        self.ca_file = folder / "ca.pem"
        self.authority.cert_pem.write_to_path(str(self.ca_file))
        self.objects: dict[str, bytes] = {}
        self.signatures: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []
        store = self

        class Handler(BaseHTTPRequestHandler):
            def _name(self) -> str | None:
                parts = urlsplit(self.path)
                name = parts.path.removeprefix("/objects/")
                signature = parse_qs(parts.query).get("sig", [""])[0]
                store.requests.append((self.command, name))
                return name if store.signatures.get(name) == signature else None

            def do_PUT(self) -> None:
                name = self._name()
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if name is None:
                    self.send_response(403)
                else:
                    store.objects[name] = body
                    self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                name = self._name()
                if name is None or name not in store.objects:
                    self.send_response(403 if name is None else 404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                body = store.objects[name]
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.authority.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _url(self, name: str) -> str:
        signature = self.signatures.setdefault(name, secrets.token_hex(8))
        return f"{self.url}/objects/{name}?sig={signature}"

    def write_grant(self, name: str, media_type: str, max_bytes: int = 1 << 20) -> dict:
        expires = (datetime.now(timezone.utc) + timedelta(minutes=5)).isoformat().replace("+00:00", "Z")
        return {"media_type": media_type, "max_bytes": max_bytes,
                "write": {"kind": "http-put", "url": self._url(name), "expires_at": expires}}

    def read_grant(self, name: str, media_type: str) -> dict:
        body = self.objects[name]
        expires = (datetime.now(timezone.utc) + timedelta(minutes=5)).isoformat().replace("+00:00", "Z")
        return {"media_type": media_type, "max_bytes": len(body), "size_bytes": len(body),
                "sha256": hashlib.sha256(body).hexdigest(),
                "read": {"kind": "http-get", "url": self._url(name), "expires_at": expires}}

    def stop(self) -> None:
        self.server.shutdown()
