"""envhost for asyncio: the same operations as :mod:`envhost`, as coroutines.

Each call that enters a guest runs on a worker thread (``asyncio.to_thread``) with the GIL
released, so the event loop keeps serving while guests run, and calls into different episodes
run on different cores.

>>> host = await envhost.aio.Host.load({"slack": "slack.wasm"})
>>> episode = await host.episode()
>>> result = await episode.call_tool("slack_send_message", {"channel": "general", "text": "hi"})
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

from . import _envhost

__all__ = ["Computer", "Episode", "Host"]


class Host:
    """An :class:`envhost.Host` whose calls are coroutines; make one with :meth:`Host.load`."""

    def __init__(self, host: _envhost.Host) -> None:
        self.sync = host

    @classmethod
    async def load(cls, environments: Mapping[str, Any] | None = None, **options: Any) -> Host:
        """Loads (compiling on first use) the environments, computers and agents, as
        ``envhost.Host(...)``."""
        return cls(await asyncio.to_thread(_envhost.Host, dict(environments or {}), **options))

    @property
    def environments(self) -> list[str]:
        """The environments' names, the default first."""
        return self.sync.environments

    @property
    def computers(self) -> list[str]:
        """The computer drivers' names, the default first."""
        return self.sync.computers

    @property
    def agents(self) -> list[str]:
        """The agents' names."""
        return self.sync.agents

    @property
    def episode_count(self) -> int:
        """How many episodes are open."""
        return self.sync.episode_count

    async def call_many(self, calls: list[tuple[Episode, str, dict[str, Any] | None]], *, role: str | None = None,
                        threads: int | None = None) -> list[_envhost.ToolResult]:
        """Many tool calls at once (``envhost.Host.call_many``)."""
        batch = [(episode.sync, name, arguments) for episode, name, arguments in calls]
        return await asyncio.to_thread(self.sync.call_many, batch, role=role, threads=threads)

    async def load_snapshot(self, data: bytes) -> _envhost.Snapshot:
        """Keeps a snapshot's bytes for restores (``envhost.Host.load_snapshot``)."""
        return await asyncio.to_thread(self.sync.load_snapshot, data)

    async def episode(self, environment: str | None = None, parts: list[dict[str, Any]] | None = None) -> Episode:
        """A new episode, loaded with ``parts`` when given (``envhost.Host.episode``)."""
        return Episode(await asyncio.to_thread(self.sync.episode, environment, parts))

    async def computer(self, name: str | None = None) -> Computer:
        """A new computer of a driver (``envhost.Host.computer``)."""
        return Computer(await asyncio.to_thread(self.sync.computer, name))

    async def restore(self, snapshot: _envhost.Snapshot | bytes) -> Episode:
        """A new episode in a snapshot's state (``envhost.Host.restore``)."""
        return Episode(await asyncio.to_thread(self.sync.restore, snapshot))

    async def restore_computer(self, snapshot: _envhost.ComputerSnapshot) -> Computer:
        """A new computer in a computer's snapshot's state (``envhost.Host.restore``)."""
        return Computer(await asyncio.to_thread(self.sync.restore, snapshot))

    async def invoke(self, agent: str, episode: Episode, prompt: str, *,
                     session: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """An agent's turn on ``episode``: its events, the last ``completed`` or ``failed``."""
        turn = self.sync.invoke(agent, episode.sync, prompt, session=session)
        while (event := await asyncio.to_thread(next, turn, None)) is not None:
            yield event


class _Served:
    """What an episode and a computer share: the wrapped object (``sync``), its plain methods
    (no guest call), and its data plane and tool calls as coroutines."""

    def __init__(self, sync: Any) -> None:
        self.sync = sync

    @property
    def id(self) -> str:
        """The id."""
        return self.sync.id

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self.sync.closed

    def card(self) -> dict[str, Any]:
        """The card (no guest call: not a coroutine)."""
        return self.sync.card()

    def list_tools(self, role: str | None = None) -> list[dict[str, Any]]:
        """The tools ``role`` may call, as MCP lists them (no guest call: not a coroutine)."""
        return self.sync.list_tools(role)

    def enable_tools(self, role: str, tools: list[str] | str) -> dict[str, Any]:
        """Lets ``role`` call ``tools`` (no guest call)."""
        return self.sync.enable_tools(role, tools)

    def disable_tools(self, role: str, tools: list[str] | str) -> dict[str, Any]:
        """Keeps ``role`` from ``tools`` (no guest call)."""
        return self.sync.disable_tools(role, tools)

    async def reset(self) -> None:
        """``reset()`` of the wrapped object."""
        await asyncio.to_thread(self.sync.reset)

    async def add(self, parts: list[dict[str, Any]]) -> None:
        """``data/add`` of ``parts``."""
        await asyncio.to_thread(self.sync.add, parts)

    async def get(self) -> list[dict[str, Any]]:
        """``data/get``: the data as parts."""
        return await asyncio.to_thread(self.sync.get)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, role: str | None = None,
                        session: str | None = None) -> _envhost.ToolResult:
        """Calls tool ``name``."""
        return await asyncio.to_thread(self.sync.call_tool, name, arguments, role=role, session=session)

    def close(self) -> None:
        """Drops it."""
        self.sync.close()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class Episode(_Served):
    """An :class:`envhost.Episode` whose guest calls are coroutines."""

    @property
    def environment(self) -> str:
        """The name of its environment in the host."""
        return self.sync.environment

    async def call_extension(self, uri: str, method: str, params: dict[str, Any] | None = None, *,
                             role: str | None = None) -> Any:
        """Calls an extension's method (``envhost.Episode.call_extension``)."""
        return await asyncio.to_thread(self.sync.call_extension, uri, method, params, role=role)

    async def snapshot(self) -> _envhost.Snapshot:
        """A snapshot of the episode (``envhost.Episode.snapshot``)."""
        return await asyncio.to_thread(self.sync.snapshot)

    async def fork(self) -> Episode:
        """A new episode in this one's state."""
        return Episode(await asyncio.to_thread(self.sync.fork))


class Computer(_Served):
    """An :class:`envhost.Computer` whose driver calls are coroutines."""

    @property
    def driver(self) -> str:
        """The name of its driver in the host."""
        return self.sync.driver

    async def screenshot(self) -> bytes:
        """The display now, as PNG bytes."""
        return await asyncio.to_thread(self.sync.screenshot)

    async def call_extension(self, uri: str, method: str, params: dict[str, Any] | None = None) -> Any:
        """Calls an extension's method (``envhost.Computer.call_extension``)."""
        return await asyncio.to_thread(self.sync.call_extension, uri, method, params)

    async def snapshot(self) -> _envhost.ComputerSnapshot:
        """The computer's state, kept in memory (``envhost.Computer.snapshot``)."""
        return await asyncio.to_thread(self.sync.snapshot)

    async def fork(self) -> Computer:
        """A new computer in this one's state."""
        return Computer(await asyncio.to_thread(self.sync.fork))
