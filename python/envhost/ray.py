"""envhost.ray: an episode pool on a Ray cluster (docs/cluster.md#the-ray-pool).

An :class:`EpisodePool` starts Ray actors that each hold an :class:`envhost.Host` (one per node
by default, ``actors_per_node`` for more), places each new episode on the actor with the fewest
and answers a :class:`PoolEpisode`: a handle that knows its actor and offers an episode's
operations (``reset``, ``add``, ``get``, ``list_tools``, ``call_tool``, ``call_extension``,
``enable_tools``, ``disable_tools``, ``snapshot``, ``fork``, ``close``). ``pool.call_many`` steps
many episodes with one round trip per actor, and ``pool.episodes`` creates many the same way.

Durability is on request: a step made with ``checkpoint=True`` (or ``episode.checkpoint()``)
keeps the episode's snapshot in Ray's object store, owned by the caller's process. When an
actor is lost (its node died), its episodes that have a checkpoint are restored on the
surviving actors and answer as they did at the checkpoint; the call that met the loss is then
made again on the restored episode. An episode without a checkpoint, or whose restore failed
(say, every surviving actor is at its ``max_episodes``), is lost: its calls raise
``EnvhostError`` ``episode_lost``.

The components are read once by the caller and travel to the actors through the object store,
so a node needs no copy of them. Results are :class:`envhost.ToolResult` s (they pickle as one
JSON document each, read into Python values only when asked), failures ``EnvhostError`` s with
the same coded fields as in-process.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from ._envhost import EnvhostError, Host, ToolResult

__all__ = ["EpisodePool", "PoolEpisode"]

Json = Any
_ACTOR_LOST = (RayActorError, ActorDiedError, ActorUnavailableError)
_ERROR_FIELDS = ("code", "message", "retryable", "applied", "hint", "status")


def _error_record(error: EnvhostError) -> dict[str, Json]:
    return {field: getattr(error, field, None) for field in _ERROR_FIELDS}


def _error(record: Mapping[str, Json]) -> EnvhostError:
    error = EnvhostError(f"{record['code']}: {record['message']}")
    for field in _ERROR_FIELDS:
        setattr(error, field, record.get(field))
    return error


def _coded(code: str, message: str, *, status: int = 400, retryable: bool = False,
           applied: str = "no", hint: str | None = None) -> EnvhostError:
    return _error({"code": code, "message": message, "retryable": retryable,
                   "applied": applied, "hint": hint, "status": status})


class HostActor:
    """The actor: one :class:`envhost.Host` and its episodes by id, running a batch of calls on
    ``threads`` threads (the CPUs it was given). Every method answers
    ``("ok", value)`` or ``("error", record)``; an ``EnvhostError`` never leaves it as an
    exception, so its coded fields survive the trip."""

    def __init__(self, components: dict[str, Any], options: dict[str, Any], threads: int) -> None:
        self._threads = threads
        self._episodes: dict[str, Any] = {}
        self._failure: dict[str, Json] | None = None
        self._dir = tempfile.mkdtemp(prefix="envhost-ray-")
        copies: dict[str, str] = {}
        environments = {name: self._spec(name, spec, copies) for name, spec in components["environments"].items()}
        agents = {name: self._spec(name, spec, copies) for name, spec in components["agents"].items()}
        try:
            self._host = Host(environments, agents=agents, **options)
        except EnvhostError as error:
            self._failure = _error_record(error)
            for copy, original in copies.items():
                self._failure["message"] = str(self._failure["message"]).replace(copy, original)
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)

    def _spec(self, name: str, spec: dict[str, Any], copies: dict[str, str]) -> dict[str, Any]:
        path = os.path.join(self._dir, f"{len(os.listdir(self._dir))}-{name}.wasm")
        with open(path, "wb") as file:
            file.write(spec["bytes"])
        copies[path] = spec["path"]
        return {**spec["table"], "component": path}

    def started(self) -> tuple[str, Any]:
        """Whether the actor's Host started: ``("ok", None)`` or ``("error", record)``."""
        return ("error", self._failure) if self._failure else ("ok", None)

    def node_id(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def _keep(self, episode: Any) -> str:
        self._episodes[episode.id] = episode
        return episode.id

    def _episode(self, episode_id: str) -> Any:
        episode = self._episodes.get(episode_id)
        if episode is None:
            raise _coded("episode_not_found", f"no episode {episode_id}", status=404)
        return episode

    def create(self, environment: str | None, parts: list | None, count: int) -> tuple[str, Any]:
        ids = []
        try:
            for _ in range(count):
                ids.append(self._keep(self._host.episode(environment, parts)))
        except EnvhostError as error:
            for episode_id in ids:
                self._episodes.pop(episode_id).close()
            return ("error", _error_record(error))
        return ("ok", ids)

    def restore(self, checkpoints: list[tuple[ray.ObjectRef, str]]) -> list[tuple[str, Any]]:
        """Restores each ``(batch, episode id)`` checkpoint: answers, in order, ``("ok", new
        id)`` or ``("error", record)``."""
        batches = ray.get([batch for batch, _ in checkpoints])
        answers = []
        for batch, (_, key) in zip(batches, checkpoints):
            try:
                answers.append(("ok", self._keep(self._host.restore(batch[key]))))
            except EnvhostError as error:
                answers.append(("error", _error_record(error)))
        return answers

    def restore_bytes(self, data: bytes) -> tuple[str, Any]:
        """A new episode restored from a snapshot file: ``("ok", (id, environment))``."""
        try:
            episode = self._host.restore(data)
        except EnvhostError as error:
            return ("error", _error_record(error))
        return ("ok", (self._keep(episode), episode.environment))

    def apply(self, episode_id: str, method: str, args: tuple, kwargs: dict,
              checkpoint: bool) -> tuple[str, Any, bytes | None]:
        """Episode ``episode_id``'s ``method(*args, **kwargs)`` (``invoke``: an agent's turn on
        it, ``(agent, prompt)``, collected); with ``checkpoint``, its snapshot's bytes after the
        call too."""
        try:
            episode = self._episode(episode_id)
            if method == "invoke":
                agent, prompt = args
                value = self._host.invoke(agent, episode, prompt, **kwargs).collect()
            else:
                value = getattr(episode, method)(*args, **kwargs)
            if method == "fork":
                value = self._keep(value)
            elif method == "snapshot":
                value = bytes(value)
            elif method == "close":
                del self._episodes[episode_id]
            snapshot = bytes(episode.snapshot()) if checkpoint else None
        except EnvhostError as error:
            return ("error", _error_record(error), None)
        return ("ok", value, snapshot)

    def call_many(self, calls: list[tuple[str, str, dict | None]], role: str | None,
                  checkpoint: bool) -> tuple[list[tuple[str, Any]], dict[str, bytes]]:
        """Each ``(episode id, tool, arguments)`` call through ``Host.call_many``; with
        ``checkpoint``, the snapshots of the episodes called, by id."""
        answers: list[tuple[str, Any]] = [("error", None)] * len(calls)
        batch, places = [], []
        for index, (episode_id, name, arguments) in enumerate(calls):
            episode = self._episodes.get(episode_id)
            if episode is None:
                answers[index] = ("error", _error_record(
                    _coded("episode_not_found", f"no episode {episode_id}", status=404)))
            else:
                batch.append((episode, name, arguments))
                places.append(index)
        try:
            results = self._host.call_many(batch, role=role, threads=self._threads) if batch else []
        except EnvhostError as error:
            return ([("error", _error_record(error))] * len(calls), {})
        for index, result in zip(places, results):
            answers[index] = ("ok", result)
        snapshots = {}
        if checkpoint:
            for episode_id in {calls[index][0] for index in places}:
                snapshots[episode_id] = bytes(self._episodes[episode_id].snapshot())
        return (answers, snapshots)


def _read_components(specs: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    components = {}
    for name, spec in (specs or {}).items():
        if isinstance(spec, Mapping):
            table = {k: v for k, v in spec.items() if k != "component"}
            path = spec.get("component")
            if path is None:
                raise _coded("invalid_params", f'{name}: the dict has no "component"')
        else:
            table, path = {}, spec
        try:
            with open(os.fspath(path), "rb") as file:
                data = file.read()
        except OSError as error:
            raise _coded("load_failed", f"{name}: reading {path}: {error}") from error
        components[name] = {"bytes": data, "table": table, "path": os.fspath(path)}
    return components


def _unwrap(answer: tuple) -> Any:
    if answer[0] == "error":
        raise _error(answer[1])
    return answer[1]


class PoolEpisode:
    """An episode on one of the pool's actors. Its methods are :class:`envhost.Episode`'s; each
    is one round trip to the actor. ``checkpoint=True`` on a step keeps the episode's snapshot
    in the object store after it."""

    __slots__ = ("_pool", "_slot", "_id", "_checkpoint", "_lost", "environment")

    def __init__(self, pool: EpisodePool, slot: int, episode_id: str, environment: str | None) -> None:
        self._pool = pool
        self._slot = slot
        self._id = episode_id
        self._checkpoint: tuple[ray.ObjectRef, str] | None = None
        self._lost: str | None = None
        self.environment = environment

    @property
    def id(self) -> str:
        """The episode's id on its current actor (a restore gives it a new one)."""
        return self._id

    @property
    def node_id(self) -> str:
        """The Ray node id of the actor holding the episode."""
        return self._pool._nodes[self._slot]

    @property
    def durable(self) -> bool:
        """Whether the episode has a checkpoint to be restored from."""
        return self._checkpoint is not None

    def _apply(self, method: str, *args: Any, checkpoint: bool = False, **kwargs: Any) -> Any:
        return self._pool._apply(self, method, args, kwargs, checkpoint)

    def _lost_error(self) -> EnvhostError:
        return _coded("episode_lost", f"episode {self._id} is lost: {self._lost}", status=410, applied="unknown")

    def card(self) -> dict[str, Json]:
        """The episode's card."""
        return self._apply("card")

    def reset(self, *, checkpoint: bool = False) -> None:
        """``data/reset``."""
        return self._apply("reset", checkpoint=checkpoint)

    def add(self, parts: list[dict[str, Json]], *, checkpoint: bool = False) -> None:
        """``data/add`` of ``parts``."""
        return self._apply("add", parts, checkpoint=checkpoint)

    def get(self) -> list[dict[str, Json]]:
        """``data/get``: the episode's state as parts."""
        return self._apply("get")

    def list_tools(self, role: str | None = None) -> list[dict[str, Json]]:
        """The tools ``role`` may call, as MCP's ``tools/list`` entries."""
        return self._apply("list_tools", role)

    def call_tool(self, name: str, arguments: dict[str, Json] | None = None, *,
                  role: str | None = None, checkpoint: bool = False) -> ToolResult:
        """Calls tool ``name``; a tool's failure is a result with ``is_error``."""
        return self._apply("call_tool", name, arguments, role=role, checkpoint=checkpoint)

    def call_extension(self, uri: str, method: str, params: dict[str, Json] | None = None, *,
                       role: str | None = None, checkpoint: bool = False) -> Json:
        """Extension ``uri``'s operation ``method``."""
        return self._apply("call_extension", uri, method, params, role=role, checkpoint=checkpoint)

    def enable_tools(self, role: str, tools: list[str] | str) -> dict[str, Json]:
        """Enables ``tools`` for ``role``."""
        return self._apply("enable_tools", role, tools)

    def disable_tools(self, role: str, tools: list[str] | str) -> dict[str, Json]:
        """Disables ``tools`` for ``role``."""
        return self._apply("disable_tools", role, tools)

    def snapshot(self) -> bytes:
        """The episode's snapshot file: bytes any host serving the same component restores."""
        return self._apply("snapshot")

    def checkpoint(self) -> None:
        """Keeps the episode's snapshot in the object store now."""
        self._apply("card", checkpoint=True)

    def fork(self) -> PoolEpisode:
        """A new episode on the same actor, in this one's state."""
        fork_id = self._apply("fork")
        return self._pool._adopt(self._slot, fork_id, self.environment)

    def close(self) -> None:
        """Closes the episode (closing twice is no error)."""
        if self._lost or self._pool._episodes[self._slot].get(self._id) is not self:
            return
        self._apply("close")
        self._pool._forget(self)

    def __enter__(self) -> PoolEpisode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<envhost.ray.PoolEpisode {self._id} on actor {self._slot}>"


class EpisodePool:
    """Episodes of ``environments`` (and ``agents``, as :class:`envhost.Host` takes them) on
    Ray actors: ``actors_per_node`` actors on every alive node with ``num_cpus`` free CPUs, or
    on the nodes ``node_ids`` names; each actor's Host gets ``host_options`` (``max_episodes``,
    ``memory_mib``, ...). Connects to Ray (``ray.init()``) when the caller has not.

    Nodes that join the cluster later get no actor; a pool's actors end with ``shutdown()`` (or
    the ``with`` block), their episodes with them.

    Raises ``EnvhostError`` ``load_failed`` when a component cannot be read or loaded (the
    Host's own errors when its options are refused), ``no_nodes`` when no alive node has
    ``num_cpus`` CPUs, and ``actors_unplaced`` (retryable) when the actors could not all start
    within ``start_timeout_s`` seconds, their nodes' CPUs being held by other actors.
    """

    def __init__(self, environments: Mapping[str, Any], *, agents: Mapping[str, Any] | None = None,
                 actors_per_node: int = 1, num_cpus: float = 1, node_ids: Sequence[str] | None = None,
                 start_timeout_s: float = 60, **host_options: Any) -> None:
        components = {"environments": _read_components(environments),
                      "agents": _read_components(agents)}
        if not ray.is_initialized():
            ray.init()
        if node_ids is None:
            node_ids = [node["NodeID"] for node in ray.nodes()
                        if node["Alive"] and node["Resources"].get("CPU", 0) >= num_cpus]
        if not node_ids:
            raise _coded("no_nodes", f"no alive Ray node has {num_cpus} CPUs for an actor", status=503)
        shared = ray.put(components)
        actor_class = ray.remote(HostActor)
        self._lock = threading.RLock()
        self._actors: list[Any] = []
        self._nodes: list[str] = []
        for node_id in node_ids:
            for _ in range(actors_per_node):
                self._actors.append(actor_class.options(
                    num_cpus=num_cpus, max_restarts=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                ).remote(shared, host_options, max(1, int(num_cpus))))
                self._nodes.append(node_id)
        self._alive = [True] * len(self._actors)
        self._episodes: list[dict[str, PoolEpisode]] = [{} for _ in self._actors]
        self._default = next(iter(environments), None)
        self._start(start_timeout_s)

    def _start(self, timeout_s: float) -> None:
        """Waits for every actor's Host; ends them all and raises when one did not start."""
        started = [actor.started.remote() for actor in self._actors]
        _, pending = ray.wait(started, num_returns=len(started), timeout=timeout_s)
        failure = None
        if pending:
            failure = _coded("actors_unplaced", f"{len(pending)} of the pool's {len(started)} actors did not "
                             f"start within {timeout_s:g} s: their nodes have no free CPUs (other actors hold "
                             "them)", status=503, retryable=True,
                             hint="shut down other pools or actors, or ask for fewer (actors_per_node, num_cpus)")
        else:
            for answer in started:
                try:
                    status, value = ray.get(answer)
                except _ACTOR_LOST as error:
                    status, value = "error", {"code": "load_failed", "message": f"an actor died starting: {error}",
                                              "status": 500, "applied": "no", "retryable": False}
                if status == "error":
                    failure = _error(value)
                    break
        if failure is not None:
            self.shutdown()
            raise failure

    @property
    def actors(self) -> int:
        """How many actors are alive."""
        return sum(self._alive)

    @property
    def node_ids(self) -> list[str]:
        """The nodes of the alive actors, one entry per actor."""
        return [node for node, alive in zip(self._nodes, self._alive) if alive]

    def episode_counts(self) -> list[int]:
        """How many episodes each alive actor holds, as the pool counts them."""
        return [len(held) for held, alive in zip(self._episodes, self._alive) if alive]

    def _least_loaded(self, exclude: Iterable[int] = ()) -> int:
        skip = set(exclude)
        slots = [s for s, alive in enumerate(self._alive) if alive and s not in skip]
        if not slots:
            raise _coded("no_actors", "every actor of the pool is lost", status=503, retryable=False)
        return min(slots, key=lambda s: len(self._episodes[s]))

    def _adopt(self, slot: int, episode_id: str, environment: str | None) -> PoolEpisode:
        handle = PoolEpisode(self, slot, episode_id, environment)
        self._episodes[slot][episode_id] = handle
        return handle

    def _forget(self, handle: PoolEpisode) -> None:
        self._episodes[handle._slot].pop(handle._id, None)

    def episode(self, environment: str | None = None, parts: list[dict[str, Json]] | None = None) -> PoolEpisode:
        """A new episode on the least loaded actor, seeded with ``parts`` (``data/add``)."""
        return self.episodes(1, environment, parts)[0]

    def episodes(self, count: int, environment: str | None = None,
                 parts: list[dict[str, Json]] | None = None) -> list[PoolEpisode]:
        """``count`` new episodes spread over the actors by load, one round trip per actor."""
        environment = environment or self._default
        with self._lock:
            shares: dict[int, int] = {}
            planned = [len(held) for held in self._episodes]
            for _ in range(count):
                slot = min((s for s, alive in enumerate(self._alive) if alive),
                           key=lambda s: planned[s], default=None)
                if slot is None:
                    raise _coded("no_actors", "every actor of the pool is lost", status=503)
                planned[slot] += 1
                shares[slot] = shares.get(slot, 0) + 1
            pending = {slot: self._actors[slot].create.remote(environment, parts, n)
                       for slot, n in shares.items()}
            created, failure = [], None
            for slot, ref in pending.items():
                try:
                    created.extend((slot, episode_id) for episode_id in _unwrap(ray.get(ref)))
                except EnvhostError as error:
                    failure = error
                except _ACTOR_LOST:
                    self._lose(slot)
                    failure = _coded("actor_lost", "an actor was lost while creating episodes",
                                     status=503, retryable=True)
            handles = [self._adopt(slot, episode_id, environment) for slot, episode_id in created]
            if failure is not None:
                for handle in handles:
                    handle.close()
                raise failure
            return handles

    def restore(self, snapshot: bytes) -> PoolEpisode:
        """A new episode restored from a snapshot's bytes, on the least loaded actor."""
        with self._lock:
            slot = self._least_loaded()
            episode_id, environment = _unwrap(ray.get(self._actors[slot].restore_bytes.remote(snapshot)))
            return self._adopt(slot, episode_id, environment)

    def _apply(self, handle: PoolEpisode, method: str, args: tuple, kwargs: dict, checkpoint: bool) -> Any:
        for _ in range(len(self._actors) + 1):
            if handle._lost:
                raise handle._lost_error()
            slot = handle._slot
            try:
                answer = ray.get(self._actors[slot].apply.remote(handle._id, method, args, kwargs, checkpoint))
            except _ACTOR_LOST:
                self._lose(slot)
                continue
            status, value, snapshot = answer
            if status == "error":
                raise _error(value)
            if snapshot is not None:
                handle._checkpoint = (ray.put({handle._id: snapshot}), handle._id)
            return value
        raise _coded("actor_lost", "the actors were lost one after another", status=503, retryable=True)

    def call_many(self, calls: Sequence[tuple[PoolEpisode, str, dict[str, Json] | None]], *,
                  role: str | None = None, checkpoint: bool = False) -> list[ToolResult]:
        """Calls many tools at once: ``calls`` is a list of ``(episode, name, arguments)``;
        answers their results in order. One round trip per actor, whose Host runs its share
        with ``Host.call_many``. With ``checkpoint``, every episode called keeps its snapshot
        after its calls. A call whose episode was lost raises ``episode_lost`` after the
        others are made."""
        results: list[ToolResult | None] = [None] * len(calls)
        remaining = list(range(len(calls)))
        lost_error: EnvhostError | None = None
        for _ in range(len(self._actors) + 1):
            if not remaining:
                break
            groups: dict[int, list[int]] = {}
            for index in remaining:
                handle = calls[index][0]
                if handle._lost:
                    lost_error = handle._lost_error()
                    continue
                groups.setdefault(handle._slot, []).append(index)
            pending = {
                slot: self._actors[slot].call_many.remote(
                    [(calls[i][0]._id, calls[i][1], calls[i][2]) for i in indices], role, checkpoint)
                for slot, indices in groups.items()
            }
            remaining = []
            for slot, ref in pending.items():
                indices = groups[slot]
                try:
                    answers, snapshots = ray.get(ref)
                except _ACTOR_LOST:
                    self._lose(slot)
                    remaining.extend(indices)
                    continue
                if snapshots:
                    batch = ray.put(snapshots)
                    for index in indices:
                        handle = calls[index][0]
                        if handle._id in snapshots:
                            handle._checkpoint = (batch, handle._id)
                for index, (status, value) in zip(indices, answers):
                    if status == "error":
                        raise _error(value)
                    results[index] = value
            remaining.sort()
        if lost_error is not None:
            raise lost_error
        if remaining:
            raise _coded("actor_lost", "the actors were lost one after another", status=503, retryable=True)
        return results  # type: ignore[return-value]

    def invoke(self, agent: str, episode: PoolEpisode, prompt: str, *, session: str | None = None) -> dict[str, Json]:
        """One turn of ``agent`` on ``episode``, run on the episode's actor: the turn's events
        collected as :meth:`envhost.Turn.collect` answers them. An actor lost meanwhile is
        handled as for any call (the turn runs again on the restored episode)."""
        return self._apply(episode, "invoke", (agent, prompt), {"session": session}, False)

    def _orphan(self, slot: int) -> list[PoolEpisode]:
        """Marks actor ``slot`` lost: answers its episodes that have a checkpoint, and marks
        the others lost."""
        self._alive[slot] = False
        orphans = list(self._episodes[slot].values())
        self._episodes[slot] = {}
        for handle in orphans:
            if handle._checkpoint is None:
                handle._lost = "its actor was lost and it had no checkpoint"
        return [handle for handle in orphans if not handle._lost]

    def _lose(self, slot: int) -> None:
        """Marks actor ``slot`` lost and restores its checkpointed episodes on the others, the
        least loaded first, one round trip per actor."""
        with self._lock:
            if not self._alive[slot]:
                return
            durable = self._orphan(slot)
            while durable:
                alive = [s for s, up in enumerate(self._alive) if up]
                if not alive:
                    for handle in durable:
                        handle._lost = "its actor was lost and no other actor is left to restore it on"
                    return
                load = {s: len(self._episodes[s]) for s in alive}
                plan: dict[int, list[PoolEpisode]] = {}
                for handle in durable:
                    target = min(alive, key=load.__getitem__)
                    load[target] += 1
                    plan.setdefault(target, []).append(handle)
                durable = []
                for target, handles in plan.items():
                    try:
                        answer = ray.get(self._actors[target].restore.remote(
                            [h._checkpoint for h in handles]))
                    except _ACTOR_LOST:
                        durable.extend(handles)
                        durable.extend(self._orphan(target))
                        continue
                    for handle, (status, value) in zip(handles, answer):
                        if status == "error":
                            handle._lost = f"its actor was lost and its restore failed: {value['code']}: {value['message']}"
                            continue
                        handle._slot, handle._id = target, value
                        self._episodes[target][value] = handle

    def shutdown(self) -> None:
        """Ends every actor (their episodes with them)."""
        for actor in self._actors:
            ray.kill(actor)
        self._alive = [False] * len(self._actors)
        for held in self._episodes:
            for handle in held.values():
                handle._lost = "the pool was shut down"
            held.clear()

    def __enter__(self) -> EpisodePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
