"""The envhost server the providers talk to: its base URL and operator token, from agent-env's
`[plugins.agentenv-envhost]` settings (`url`, `token_file`, `seeds`) or the environment
(`ENVHOST_URL`, `ENVHOST_CONTROL_TOKEN`); or, when neither names a URL and the settings name
`components`, a local `envhost serve` the plugin starts (`agentenv_envhost.local`)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

DIST = "agentenv-envhost"
DEFAULT_URL = "http://127.0.0.1:18765"


def _settings() -> dict[str, Any]:
    try:
        from agent_env.plugins import settings

        return settings(DIST) or {}
    except Exception:
        return {}


def _config_dir() -> Path:
    """The folder of agent-env's config file, which relative paths in the settings start from
    (the working directory when there is none)."""
    try:
        from agent_env.config.loader import discover_config_path

        found = discover_config_path()
    except Exception:
        found = None
    return found.parent if found is not None else Path.cwd()


@dataclass(frozen=True)
class Server:
    """An envhost server: `url` (no trailing slash), the operator token when it needs one, and
    the parts each environment's new episodes are seeded with (`seeds`: environment name → a
    JSON file holding a list of parts, relative to the config file's folder)."""

    url: str
    token: str | None
    seeds: dict[str, str] = field(default_factory=dict)

    @classmethod
    def configured(cls) -> Server:
        """The server the settings name; `ENVHOST_URL` and `ENVHOST_CONTROL_TOKEN` win."""
        configured = _settings()
        base = _config_dir()
        url = os.environ.get("ENVHOST_URL") or configured.get("url")
        token = os.environ.get("ENVHOST_CONTROL_TOKEN")
        if url is None and configured.get("components"):
            from .local import started

            url, token = started(configured, base)
        url = url or DEFAULT_URL
        if token is None and configured.get("token_file"):
            token = Path(configured["token_file"]).expanduser().read_text().strip()
        seeds = {str(k): str(base / Path(str(v)).expanduser()) for k, v in (configured.get("seeds") or {}).items()}
        return cls(url.rstrip("/"), token, seeds)

    def seed_parts(self, environment: str) -> list[dict[str, Any]] | None:
        """The parts new episodes of `environment` start with, when the settings name a file."""
        path = self.seeds.get(environment)
        if path is None:
            return None
        parts = json.loads(Path(path).expanduser().read_text())
        if not isinstance(parts, list):
            raise ValueError(f"{path} must hold a JSON list of parts")
        return parts

    def client(self) -> httpx.AsyncClient:
        """An HTTP client of the server's control routes, with the token."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=60)
