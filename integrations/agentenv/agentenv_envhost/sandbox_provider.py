"""The sandbox provider `envhost` (container shape): an agent's sandbox is a *deployment* of an
envhost agent, an agentenv A2A agent at its own base URL; an environment's sandbox is the
episode the environment provider made. Terminating either deletes it."""
from __future__ import annotations

from typing import Any, ClassVar

from agent_env.providers.sandbox_providers.sandbox import Sandbox
from agent_env.providers.sandbox_providers.sandbox_provider import Accepts, SandboxNotFoundError, SandboxProvider

from .server import Server

#: The sandbox ids of agent deployments begin with this; others are episodes.
DEPLOYMENT_ID_PREFIX = "deployment-"

#: The variable of an agent's `default_env_vars` that names the envhost agent to deploy.
AGENT_VARIABLE = "ENVHOST_AGENT"


def _route(sandbox_id: str) -> str:
    """The control route of sandbox `sandbox_id`: `/deployments/{id}` or `/episodes/{id}`."""
    if sandbox_id.startswith(DEPLOYMENT_ID_PREFIX):
        return f"/deployments/{sandbox_id.removeprefix(DEPLOYMENT_ID_PREFIX)}"
    return f"/episodes/{sandbox_id}"


def agent_name(image_name: str | None, env: dict[str, str] | None) -> str:
    """The envhost agent an agent sandbox deploys: `ENVHOST_AGENT` in `env`, else the image
    name without its registry, path and tag (`ghcr.io/acme/tool-agent:1` → `tool-agent`)."""
    named = (env or {}).get(AGENT_VARIABLE)
    if named:
        return named
    if not image_name:
        raise ValueError(f"name the envhost agent: set {AGENT_VARIABLE} in the agent's default_env_vars")
    return image_name.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]


class EnvhostSandbox(Sandbox):
    """An envhost deployment or episode as agent-env's sandbox: nothing runs in it but the
    component; it has no shell."""

    type: ClassVar[str] = "envhost"

    def __init__(self, sandbox_id: str, server: Server, tunnel_urls: dict[int, str] | None = None) -> None:
        self.mode = "container"
        self.sandbox_id = sandbox_id
        self.tunnel_urls = tunnel_urls or {}
        self.vnc_url = None
        self.network_policy = None
        self._server = server

    async def terminate(self) -> None:
        """Deletes the deployment or episode; one already gone is no error."""
        async with self._server.client() as client:
            deleted = await client.delete(_route(self.sandbox_id))
        if deleted.status_code not in (200, 404):
            raise RuntimeError(f"envhost would not delete {self.sandbox_id}: {deleted.status_code} {deleted.text}")

    async def exec(self, *argv: str) -> Any:
        raise NotImplementedError("an envhost sandbox is a WebAssembly component: it has no shell")


class EnvhostSandboxProvider(SandboxProvider):
    """Deployments and episodes of the configured envhost server as sandboxes. An agent's image
    is not run: its build context (a bundle's `agents/NAME/Dockerfile`, `FROM scratch` will do)
    is accepted and never built, the envhost agent being already loaded by the server."""

    CONTAINER_ACCEPTS = Accepts.NAME_OR_CONTEXT
    SANDBOX_ACCEPTS = Accepts.NAME_OR_CONTEXT

    async def prepare_image(self, image: Any, *, attribution: Any = None) -> None:
        """Nothing to build or pull: the server holds the agent's component."""

    async def create_sandbox(self, *, image_name: str | None = None, port: int = 8000,
                             env: dict[str, str] | None = None, **options: Any) -> Sandbox:
        """A new deployment of the agent `ENVHOST_AGENT` (or the image's name) names, served
        at `tunnel_urls[port]`. CPU, memory, disk and timeout do not apply to a component and
        are ignored; raises `RuntimeError` naming the server's coded error when it refuses."""
        name = agent_name(image_name, env)
        server = Server.configured()
        async with server.client() as client:
            created = await client.post(f"/agents/{name}/deployments")
        if created.status_code != 201:
            raise RuntimeError(f"envhost at {server.url} would not deploy agent {name!r}: "
                               f"{created.status_code} {created.text}")
        deployment = created.json()
        return EnvhostSandbox(f"{DEPLOYMENT_ID_PREFIX}{deployment['id']}", server,
                              {port: f"{server.url}{deployment['url']}"})

    async def get_sandbox(self, sandbox_id: str) -> Sandbox:
        server = Server.configured()
        async with server.client() as client:
            found = await client.get(_route(sandbox_id))
        if found.status_code == 404:
            raise SandboxNotFoundError(sandbox_id)
        found.raise_for_status()
        return EnvhostSandbox(sandbox_id, server)
