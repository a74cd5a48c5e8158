"""envhost.aio: the same operations as coroutines, many episodes at once."""
from __future__ import annotations

import asyncio

import envhost.aio
from conftest import GENERAL, RELEASE, SLACK


def test_episodes_run_concurrently_under_asyncio():
    async def main():
        host = await envhost.aio.Host.load({"slack": SLACK})
        episodes = await asyncio.gather(*(host.episode(parts=GENERAL) for _ in range(16)))
        results = await asyncio.gather(*(e.call_tool("slack_send_message", {"channel": "general", "text": e.id})
                                         for e in episodes))
        assert all(r.structured == {"result": "ok"} for r in results)
        for episode in episodes:
            data = await episode.get()
            assert data[0]["data"]["messages"][0]["text"] == episode.id
        snapshot = await episodes[0].snapshot()
        restored = await host.restore(snapshot)
        assert await restored.get() == await episodes[0].get()
        async with await host.episode() as scratch:
            assert [t["name"] for t in scratch.list_tools()]
        for episode in episodes:
            episode.close()

    asyncio.run(main())


def test_computers_answer_under_asyncio():
    async def main():
        host = await envhost.aio.Host.load(computers={"desk": RELEASE / "desk.wasm"})
        assert host.computers == ["desk"]
        desks = await asyncio.gather(*(host.computer() for _ in range(3)))
        shots = await asyncio.gather(*(d.screenshot() for d in desks))
        assert len(set(shots)) == 1 and shots[0].startswith(b"\x89PNG")
        async with await desks[0].fork() as fork:
            assert await fork.screenshot() == shots[0]
        snapshot = await desks[1].snapshot()
        async with await host.restore_computer(snapshot) as restored:
            assert await restored.get() == await desks[1].get()
        for desk in desks:
            desk.close()

    asyncio.run(main())
