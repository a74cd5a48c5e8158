"""The environment provider `envhost`: a deployed environment is a new episode of
`env.environment_name` on the configured envhost server, reached by its agent URL (the episode's
own secret in the path, so the agent needs no operator token)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, ClassVar

from agent_env.env.env import DeployedSandboxEnv
from agent_env.providers.env_providers.env_provider import EnvironmentProvider

from .server import Server

WELL_KNOWN_PATH = "/.well-known/agent-env.json"
SANDBOX_TYPE = "envhost"


class EnvhostEnvironmentProvider(EnvironmentProvider):
    """Deploys an MCP-server environment as an envhost episode; its teardown goes through the
    sandbox provider `envhost`, which deletes the episode."""

    type: ClassVar[str] = "envhost"
    record_class = DeployedSandboxEnv

    async def deploy(self, env: Any, sandbox_provider: Any = None, *, ttl_seconds: int = 10800,
                     **options: Any) -> DeployedSandboxEnv:
        """A new episode of `env.environment_name`, seeded with the parts the settings' `seeds`
        name for it, dropped by the server after `ttl_seconds` if nothing ends it first; raises `RuntimeError` naming the server's coded error when
        it refuses, or when the card's name is not the environment's."""
        name = env.environment_name
        server = Server.configured()
        async with server.client() as client:
            request: dict[str, Any] = {"environment": name, "ttl_s": max(1, int(ttl_seconds))}
            parts = server.seed_parts(name)
            if parts is not None:
                request["parts"] = parts
            created = await client.post("/episodes", json=request)
            if created.status_code != 201:
                raise RuntimeError(f"envhost at {server.url} would not create an episode of {name!r}: "
                                   f"{created.status_code} {created.text}")
            episode = created.json()
            base = f"{server.url}{episode['agent_url'].rstrip('/')}"
            card_response = await client.get(f"{base}{WELL_KNOWN_PATH}")
            card_response.raise_for_status()
            card = card_response.json()
        if card.get("name") != name:
            raise RuntimeError(f"envhost serves {name!r} under the card name {card.get('name')!r}; "
                               "name the environment as agent-env does (NAME=PATH.wasm)")
        from agent_env.env.envs.mcp_server import MCPServerEnv

        return DeployedSandboxEnv(
            env_id=env.id,
            env_version=env.version,
            env_provider_type=self.type,
            environment_card_url=f"{base}{WELL_KNOWN_PATH}",
            environment_card=card,
            environment_card_read_at_utc=datetime.now(timezone.utc).isoformat(),
            sandbox_id=episode["id"],
            sandbox_type=SANDBOX_TYPE,
            sandbox_ids={MCPServerEnv.type: {name: episode["id"]}},
        )

    async def close(self) -> None:
        """Nothing held: each episode ends through the sandbox provider."""
