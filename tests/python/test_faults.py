"""A misbehaving guest fails its own call only: `envhost serve faulty.wasm --cpu-deadline-ms 500
--memory-mib 64`. The faulty guest's tools are echo(text) ("<text> (<n> calls)"), trap, spin and
grow; data/add of a data part {"fault": "trap" | "spin" | "grow"} misbehaves the same way.

Every fault must come back as an error within twice the deadline (measured here, client-side), and
the environment must serve the next call."""
from __future__ import annotations

import re
import threading
import time

import httpx
import pytest

from conftest import CARD_PATH, FAULTY_WASM, McpSession, rpc

DEADLINE_S = 0.5
# A fault answers within a few deadlines (wall-clock, on a shared 2-core machine the episode's
# rebuild after an out-of-memory fault alone can take a second), far below the call timeout a
# guest without a deadline would run into.
WITHIN_S = 4 * DEADLINE_S
ECHO_ANSWER = re.compile(r"^(?P<text>.*) \((?P<n>\d+) calls\)$")

FAULTS = [("trap", "guest_trapped"), ("spin", "deadline_exceeded"), ("grow", "out_of_memory")]
FAULT_IDS = [kind for kind, _ in FAULTS]


@pytest.fixture(scope="module")
def faulty(pool):
    return pool.envhost(FAULTY_WASM, "--cpu-deadline-ms", str(int(DEADLINE_S * 1000)), "--memory-mib", "64",
                        label="envhost-faulty")


@pytest.fixture
def session(faulty):
    with McpSession(faulty) as s:
        yield s


def timed(action):
    started = time.monotonic()
    result = action()
    return result, time.monotonic() - started


def assert_echo_works(session: McpSession, text: str = "still here") -> None:
    result = session.call("echo", {"text": text})
    assert result["isError"] is False, result
    answer = ECHO_ANSWER.match(result["content"][0]["text"])
    assert answer and answer["text"] == text, result
    assert result["structuredContent"] == {"result": result["content"][0]["text"]}


def test_echo_counts_its_calls(session):
    first = session.call("echo", {"text": "a"})["content"][0]["text"]
    second = session.call("echo", {"text": "b"})["content"][0]["text"]
    n = int(ECHO_ANSWER.match(first)["n"])
    assert second == f"b ({n + 1} calls)"


def test_the_faulty_tools_are_listed(session):
    assert sorted(session.tool_names()) == ["echo", "fill", "grow", "observe", "scan", "slow", "spin", "trap"]


@pytest.mark.parametrize("tool, code", FAULTS, ids=FAULT_IDS)
def test_a_faulting_tool_call_is_an_error_result_in_time(session, tool, code):
    result, elapsed = timed(lambda: session.call(tool))
    assert elapsed < WITHIN_S, f"{tool} took {elapsed:.3f}s"
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == code, result
    assert result["content"][0]["text"].startswith(f"{code}: ")
    assert_echo_works(session)


@pytest.mark.parametrize("fault, _code", FAULTS, ids=FAULT_IDS)
def test_a_faulting_data_add_is_add_failed_in_time(faulty, session, fault, _code):
    reply, elapsed = timed(lambda: rpc(faulty, "data/add", {"parts": [{"kind": "data", "data": {"fault": fault}}]}))
    assert elapsed < WITHIN_S, f"data/add {fault} took {elapsed:.3f}s"
    assert reply["error"]["code"] == -32000, reply
    assert reply["error"]["data"] == {"code": "add_failed"}
    assert_echo_works(session)
    assert "result" in rpc(faulty, "data/get", {})


def test_a_fault_in_a_new_session_after_a_fault_is_still_contained(faulty):
    """Two faults back to back, each from its own session, then echo from a third."""
    for tool, code in FAULTS:
        with McpSession(faulty) as s:
            assert s.call(tool)["structuredContent"]["code"] == code
    with McpSession(faulty) as s:
        assert_echo_works(s)


def test_card_fetches_are_answered_while_a_call_spins(faulty, session):
    outcome = {}

    def spin():
        outcome["result"] = session.call("spin")

    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.05)
    answered_while_spinning = 0
    with httpx.Client(base_url=faulty.base_url, timeout=5) as client:
        while spinner.is_alive():
            response, elapsed = timed(lambda: client.get(CARD_PATH))
            assert response.status_code == 200 and response.json()["name"] == "faulty"
            assert elapsed < DEADLINE_S / 2, f"a card fetch took {elapsed:.3f}s during a spin"
            answered_while_spinning += spinner.is_alive()
    spinner.join()
    assert outcome["result"]["structuredContent"]["code"] == "deadline_exceeded"
    assert answered_while_spinning >= 3


def test_calls_queued_behind_a_spinning_call_are_served_after_it(faulty, session):
    """Echo calls from another session that arrive while a call spins are not failed with it."""
    outcome, echoes = {}, []

    def spin():
        outcome["result"] = session.call("spin")

    def echo(index: int):
        with McpSession(faulty) as other:
            result, elapsed = timed(lambda: other.call("echo", {"text": f"queued {index}"}))
            echoes.append((index, result, elapsed))

    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.05)
    waiters = [threading.Thread(target=echo, args=(i,)) for i in range(3)]
    for waiter in waiters:
        waiter.start()
    for thread in (spinner, *waiters):
        thread.join()
    assert outcome["result"]["structuredContent"]["code"] == "deadline_exceeded"
    for index, result, elapsed in sorted(echoes, key=lambda e: e[0]):
        assert result["isError"] is False, result
        assert ECHO_ANSWER.match(result["content"][0]["text"])["text"] == f"queued {index}"
        assert elapsed < WITHIN_S, f"echo {index} took {elapsed:.3f}s"
    assert len(echoes) == 3


@pytest.fixture(scope="module")
def patient(pool):
    """The faulty guest with a CPU deadline far beyond the test's patience: only a cancellation
    stops a spin in time."""
    return pool.envhost(FAULTY_WASM, "--cpu-deadline-ms", "30000", label="envhost-patient")


def test_a_cancelled_call_stops_its_guest_and_the_episode_goes_on(patient):
    """notifications/cancelled for a spinning tool call stops the guest at its next tick: the call
    answers `cancelled`, the episode is rebuilt to its state before it, and serves the next call."""
    with McpSession(patient) as session:
        assert_echo_works(session, "before")
        outcome = {}

        def spin():
            outcome["result"], outcome["elapsed"] = timed(lambda: session.call("spin"))

        spinner = threading.Thread(target=spin)
        spinner.start()
        time.sleep(0.3)
        spin_id = 3  # initialize is 1, the echo 2
        cancelled = httpx.post(patient.mcp_url, json={
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": spin_id, "reason": "the test gave up"}},
            headers={**session.client.headers})
        assert cancelled.status_code == 202, cancelled.text
        spinner.join(timeout=10)
        assert not spinner.is_alive(), "the spin was not stopped"
        assert outcome["elapsed"] < 5, outcome
        assert outcome["result"]["structuredContent"]["code"] == "cancelled", outcome["result"]
        assert outcome["result"]["structuredContent"]["applied"] == "no"
        assert_echo_works(session, "after")
