"""Computers from Python (docs/python.md#computers): the desk driver loaded by a Host, its
computers' card, tools, screenshots, data plane, extensions, tool access, forks and snapshots,
in-process."""
from __future__ import annotations

import base64
import io
import threading

import pytest
from PIL import Image

import envhost
from conftest import COUNTER, RELEASE

DESK = RELEASE / "desk.wasm"


@pytest.fixture(scope="module")
def desks():
    """A host of the desk (its computers' settings say norm space) beside counter."""
    return envhost.Host({"counter": COUNTER},
                        computers={"desk": {"component": DESK, "settings": {"default_norm_scale": 500}}},
                        max_episodes=16)


def image(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png))


def test_a_screenshot_is_a_png_of_the_displays_size(desks):
    assert desks.computers == ["desk"]
    with desks.computer() as desk:
        display = desk.call_extension("urn:agentenv:computer-display/v1", "get")
        shot = image(desk.screenshot())
        assert shot.format == "PNG" and shot.size == (display["width"], display["height"]) == (1280, 800)
        card = desk.card()
        assert card["name"] == "desk" and card["capabilities"]["operations"] == ["data/add", "data/get"]
        assert desks.computer_count == 1
    assert desk.closed and desks.computer_count == 0


def test_a_click_answers_and_lands(desks):
    with desks.computer("desk") as desk:
        names = [tool["name"] for tool in desk.list_tools()]
        assert {"computer_screenshot", "computer_click", "computer_keyboard_down"} <= set(names), names
        before = desk.screenshot()
        shot = desk.call_tool("computer_screenshot")
        assert not shot.is_error and shot.content[1]["type"] == "image"
        click = desk.call_tool("computer_click", {"x": 140, "y": 80, "count": 2, "screenshot": True})
        assert not click.is_error, click.structured
        assert click.text.startswith("Clicked left ×2 at (140, 80)") and click.content[-1]["mimeType"] == "image/png"
        framed = image(base64.b64decode(click.content[-1]["data"]))
        assert framed.size == (1280, 800)
        assert desk.screenshot() != before
        assert desk.get()[0]["data"]["saved"] == 2
        refused = desk.call_tool("computer_click", {"x": -1, "y": 5})
        assert refused.is_error and refused.error["code"] == "out_of_bounds"


def test_a_fork_answers_like_its_origin_and_then_goes_its_own_way(desks):
    with desks.computer() as desk:
        desk.call_tool("computer_screenshot")
        assert not desk.call_tool("computer_click", {"x": 300, "y": 148}).is_error
        assert not desk.call_tool("computer_type", {"text": "forked"}).is_error
        with desk.fork() as fork:
            assert fork.id != desk.id and fork.screenshot() == desk.screenshot()
            assert fork.get() == desk.get()
            fork.call_tool("computer_screenshot")
            fork.call_tool("computer_type", {"text": " only"})
            assert fork.screenshot() != desk.screenshot()
            assert desk.get()[0]["data"]["name"] == "forked"


def test_a_snapshot_restores_its_state_however_its_origin_goes_on(desks):
    with desks.computer() as desk:
        desk.add([{"kind": "data", "data": {"saved": 5, "name": "kept"}}])
        kept_pixels = desk.screenshot()
        snapshot = desk.snapshot()
        assert isinstance(snapshot, envhost.ComputerSnapshot) and snapshot.inputs == 1
        desk.add([{"kind": "data", "data": {"saved": 6}}])
        with desks.restore(snapshot) as restored:
            assert isinstance(restored, envhost.Computer)
            assert restored.get()[0]["data"]["saved"] == 5 and restored.screenshot() == kept_pixels
        other = envhost.Host(computers={"desk": DESK})
        with pytest.raises(envhost.EnvhostError) as elsewhere:
            other.restore(snapshot)
        assert elsewhere.value.code == "invalid_params"


def test_the_data_plane_reset_and_tool_access(desks):
    with desks.computer() as desk:
        with pytest.raises(envhost.EnvhostError) as refused:
            desk.add([{"kind": "data", "data": {"selected": 300}}])
        assert refused.value.code == "add_failed" and "invalid_argument" in refused.value.message
        with pytest.raises(envhost.EnvhostError) as no_home:
            desk.add([{"kind": "text", "text": "x"}])
        assert no_home.value.code == "add_failed" and "no home" in no_home.value.message
        desk.add([{"kind": "data", "data": {"saved": 9}}])
        desk.disable_tools("bob", ["computer_click"])
        assert "computer_click" not in [t["name"] for t in desk.list_tools(role="bob")]
        denied = desk.call_tool("computer_click", {"x": 1, "y": 1}, role="bob")
        assert denied.is_error and denied.error["code"] == "permission_denied"
        desk.reset()
        assert desk.get()[0]["data"]["saved"] == 0
        assert "computer_click" not in [t["name"] for t in desk.list_tools(role="bob")]


def test_extensions_answer_as_over_http(desks):
    with desks.computer() as desk:
        assert desk.call_extension("urn:agentenv:computer-spaces/v1", "get") == {
            "default_space": "frame", "default_norm_scale": 500}
        desk.call_extension("urn:agentenv:computer-spaces/v1", "set", {"default_space": "norm"})
        click = next(t for t in desk.list_tools() if t["name"] == "computer_click")
        assert "norm space" in click["description"]
        ready = desk.call_extension("urn:agentenv:computer-ready/v1", "status")
        assert ready["ready"] is True
        with pytest.raises(envhost.EnvhostError) as bad:
            desk.call_extension("urn:agentenv:computer-keyboard/v1", "set", {"tap_hold_ms": 5000})
        assert bad.value.code == "invalid_argument"
        with pytest.raises(envhost.EnvhostError) as missing:
            desk.call_extension("urn:agentenv:computer-exec/v1", "run", {"argv": ["true"]})
        assert missing.value.code == "extension_not_found" and missing.value.status == 404


def test_computers_and_episodes_share_the_cap_and_errors_are_coded():
    small = envhost.Host({"counter": COUNTER}, computers={"desk": DESK}, max_episodes=2)
    episode = small.episode()
    desk = small.computer()
    with pytest.raises(envhost.EnvhostError) as full:
        small.computer()
    assert full.value.code == "too_many_episodes" and full.value.retryable
    with pytest.raises(envhost.EnvhostError) as fork_full:
        desk.fork()
    assert fork_full.value.code == "too_many_episodes"
    desk.close()
    with pytest.raises(envhost.EnvhostError) as closed:
        desk.screenshot()
    assert closed.value.code == "episode_not_found"
    with pytest.raises(envhost.EnvhostError) as unknown:
        small.computer("laptop")
    assert unknown.value.code == "computer_not_found" and "desk" in unknown.value.message
    episode.close()
    for computers, says in [({"desk": {"component": DESK, "screen": ":1"}}, 'unknown key "screen"'),
                            ({"desk": {"component": DESK, "settings": {"tap_hold_ms": 5000}}},
                             "desk: settings: tap_hold_ms must be from 0 to 1000")]:
        with pytest.raises(envhost.EnvhostError) as refused:
            envhost.Host(computers=computers)
        assert refused.value.code == "invalid_params" and says in refused.value.message, refused.value.message


def test_computers_run_on_threads_at_once(desks):
    computers = [desks.computer() for _ in range(4)]
    shots: list[bytes] = []

    def work(computer: envhost.Computer) -> None:
        computer.call_tool("computer_screenshot")
        computer.call_tool("computer_click", {"x": 140, "y": 80})
        shots.append(computer.screenshot())

    threads = [threading.Thread(target=work, args=(c,)) for c in computers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(shots) == 4 and len(set(shots)) == 1
    for computer in computers:
        computer.close()
