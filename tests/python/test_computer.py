"""A computer served by envhost from a driver component (`envhost serve --driver`), checked with
the reference's own conformance probe and the official MCP client."""
from __future__ import annotations

import base64
import io
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from PIL import Image

from conftest import CARD_PATH, DESK_WASM, X11_DRIVER_WASM, free_port, run


REFERENCE = Path(__file__).resolve().parent / "reference" / "computer"


def probe(url: str, level: str, tmp_path: Path, timeout_s: int) -> tuple[list[str], str]:
    """Runs the reference's conformance probe against `url` at `level`; answers each check's
    status and the probe's output, once it exited 0 with a passing report."""
    report_path = tmp_path / f"report-{level}.json"
    done = subprocess.run(
        [sys.executable, "-m", "agentenv_protocol.computer.conformance", url, "--level", level,
         "--json", str(report_path), "--timeout", str(timeout_s)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(report_path.read_text())
    assert report["passed"], done.stdout
    return [check["status"] for check in report["checks"]], done.stdout


@pytest.fixture(scope="module")
def desk(pool):
    return pool.driver(DESK_WASM, label="desk")


def test_the_reference_probe_passes_at_basic_against_the_desk(desk, tmp_path):
    statuses, output = probe(desk.base_url, "basic", tmp_path, 30)
    assert "failed" not in statuses, output
    assert "unverified" not in statuses, output
    assert statuses.count("passed") >= 20, output


def test_a_screenshot_and_a_click_in_norm_space_from_the_official_client(desk):
    async def session():
        async with streamablehttp_client(desk.mcp_url) as (read, write, _):
            async with ClientSession(read, write) as client:
                await client.initialize()
                shot = await client.call_tool("computer_screenshot", {})
                assert not shot.isError
                frame = shot.structuredContent
                image = Image.open(io.BytesIO(base64.b64decode(shot.content[1].data)))
                assert image.size == (frame["width"], frame["height"]) == (1280, 800)
                # The Save button's middle, (140, 80) of 1280×800, on the norm grid.
                click = await client.call_tool(
                    "computer_click",
                    {"x": 140 * 1000 / 1280, "y": 80 * 1000 / 800, "space": "norm", "screenshot": True},
                )
                assert not click.isError, click.content
                assert click.structuredContent["applied"] == "yes"
                after = Image.open(io.BytesIO(base64.b64decode(click.content[1].data))).convert("RGB")
                before = image.convert("RGB")
                assert any(before.getpixel((x, y)) != after.getpixel((x, y))
                           for x in range(52, 240) for y in range(72, 88))
                where = await client.call_tool("computer_pointer_position", {})
                assert where.structuredContent["screen"] == {"x": 140, "y": 80}
    run(session())


def test_the_card_names_the_driver_and_its_groups(desk):
    card = httpx.get(desk.url(CARD_PATH)).json()
    assert card["name"] == "desk"
    uris = [e["uri"] for e in card["capabilities"]["extensions"]]
    assert "urn:agentenv:computer-pointer/v1" in uris and "urn:agentenv:computer-keyboard/v1" in uris
    assert "urn:agentenv:computer-exec/v1" not in uris
    assert card["capabilities"]["operations"] == ["data/add", "data/get"]


def rgb(result) -> bytes:
    """The RGB pixels of a tool result's PNG."""
    png = next(c for c in result.content if getattr(c, "mimeType", None) == "image/png")
    return Image.open(io.BytesIO(base64.b64decode(png.data))).convert("RGB").tobytes()


async def calls(url: str, *steps: tuple[str, dict]) -> list:
    """Each `(tool, arguments)` of `steps` in one MCP session at `url`, each checked to succeed."""
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as client:
            await client.initialize()
            results = []
            for tool, arguments in steps:
                result = await client.call_tool(tool, arguments)
                assert not result.isError, (tool, result.content)
                results.append(result)
            return results


def test_a_desk_episode_forked_after_input_is_pixel_identical_and_then_independent(desk):
    created = httpx.post(desk.url("/episodes"))
    assert created.status_code == 201, created.text
    original = desk.url(created.json()["url"] + "mcp")
    name_field = ("computer_click", {"x": 300, "y": 148})
    steps = [("computer_screenshot", {}), ("computer_click", {"x": 140, "y": 80, "count": 2}),
             name_field, ("computer_type", {"text": "forked"}),
             ("computer_scroll", {"x": 200, "y": 400, "direction": "down", "amount": 3}),
             name_field, ("computer_screenshot", {})]
    before = rgb(run(calls(original, *steps))[-1])

    forked = httpx.post(desk.url(created.json()["url"] + "fork"))
    assert forked.status_code == 201, forked.text
    assert forked.json()["forked_from"] == created.json()["id"]
    fork = desk.url(forked.json()["url"] + "mcp")
    first, _, after = run(calls(fork, ("computer_screenshot", {}), ("computer_type", {"text": "!"}),
                                ("computer_screenshot", {})))
    assert rgb(first) == before, "the fork's first frame is not its original's"
    assert rgb(after) != before, "typing into the fork changed nothing"
    assert rgb(run(calls(original, ("computer_screenshot", {})))[0]) == before, \
        "typing into the fork changed its original"

    for episode in (created, forked):
        assert httpx.delete(desk.url(f"/episodes/{episode.json()['id']}")).json()["deleted"] is True
    assert httpx.get(desk.url(created.json()["url"] + "agentenv/ext/computer-ready/status")).status_code == 404


@pytest.fixture(scope="module")
def x11_display(tmp_path_factory):
    """An Xvfb display at 1280x800x24 for the module, stopped after it."""
    for number in range(90, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{number}") and not os.path.exists(f"/tmp/.X{number}-lock"):
            break
    log = open(tmp_path_factory.mktemp("xvfb") / "xvfb.log", "wb")
    xvfb = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while not os.path.exists(f"/tmp/.X11-unix/X{number}"):
        assert xvfb.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.05)
    yield f":{number}"
    xvfb.terminate()
    xvfb.wait(timeout=10)


def test_the_reference_probe_passes_at_basic_against_the_x11_driver_under_xvfb(pool, x11_display, tmp_path):
    server = pool.driver(X11_DRIVER_WASM, extra=["--display", x11_display], label="x11-driver")
    statuses, output = probe(server.base_url, "basic", tmp_path, 30)
    assert "failed" not in statuses and "unverified" not in statuses, output


def test_a_desk_snapshot_restores_the_state_it_kept_however_its_original_goes_on(desk):
    created = httpx.post(desk.url("/episodes")).json()
    original = desk.url(created["url"] + "mcp")
    kept = rgb(run(calls(original, ("computer_screenshot", {}), ("computer_click", {"x": 140, "y": 80}),
                         ("computer_screenshot", {})))[-1])
    snapshot = httpx.post(desk.url(created["url"] + "snapshot"))
    assert snapshot.status_code == 201, snapshot.text
    assert snapshot.json()["inputs"] == 1
    later = rgb(run(calls(original, ("computer_click", {"x": 140, "y": 80}), ("computer_screenshot", {})))[-1])
    assert later != kept
    for restore in (lambda sid: httpx.post(desk.url(f"/snapshots/{sid}/episodes")),
                    lambda sid: httpx.post(desk.url("/episodes"), json={"snapshot": sid})):
        restored = restore(snapshot.json()["snapshot"])
        assert restored.status_code == 201, restored.text
        assert restored.json()["snapshot"] == snapshot.json()["snapshot"]
        shot = run(calls(desk.url(restored.json()["url"] + "mcp"), ("computer_screenshot", {})))[0]
        assert rgb(shot) == kept, "the restored desk is not the state its snapshot kept"
        httpx.delete(desk.url(f"/episodes/{restored.json()['id']}"))
    assert httpx.delete(desk.url(f"/snapshots/{snapshot.json()['snapshot']}")).json()["deleted"] is True
    gone = httpx.post(desk.url(f"/snapshots/{snapshot.json()['snapshot']}/episodes"))
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "snapshot_not_found"
    httpx.delete(desk.url(f"/episodes/{created['id']}"))


def test_computer_episode_routes_refuse_bad_bodies_and_answer_the_cap_with_retry_after(pool):
    server = pool.driver(DESK_WASM, extra=["--max-episodes", "2"], label="desk-cap")
    for route in ("/fork", "/snapshot", "/episodes"):
        for body in (b"{bad", b'{"x": 1}', b"[]"):
            refused = httpx.post(server.url(route), content=body)
            assert refused.status_code == 400, (route, body, refused.text)
            assert refused.json()["error"]["code"] == "invalid_params"
    assert [e for e in httpx.get(server.url("/episodes")).json()["episodes"] if not e["root"]] == []
    assert httpx.get(server.url("/snapshots")).json() == {"snapshots": []}
    assert httpx.post(server.url("/episodes"), content=b"{}").status_code == 201
    full = httpx.post(server.url("/fork"))
    assert full.status_code == 503 and full.headers["retry-after"] == "1"
    assert full.json()["error"] == {
        "code": "too_many_episodes", "message": "the server holds as many computers as it may: 2, the root counted",
        "retryable": True, "applied": "no"}
    for scale in (0, -1):
        bad = httpx.post(server.url("/agentenv/ext/computer-display/set"),
                         json={"width": 1024, "height": 768, "scale": scale})
        assert bad.status_code == 400, bad.text
        assert bad.json()["error"]["message"] == f"scale is a positive number, got {scale}"


def test_a_configuration_file_serves_a_driver_with_its_grants(pool, tmp_path):
    config = tmp_path / "computer.toml"
    home = tmp_path / "home"
    home.mkdir()
    config.write_text(f'[driver]\ncomponent = "{DESK_WASM}"\nexec = true\nhome = "{home}"\nname = "desktop"\n')
    server = pool.driver_config(config, label="desk-config")
    card = httpx.get(server.url(CARD_PATH)).json()
    assert card["name"] == "desktop"
    assert "urn:agentenv:computer-exec/v1" in [e["uri"] for e in card["capabilities"]["extensions"]]
    assert card["capabilities"]["operations"] == ["data/add", "data/get"]


def test_a_driver_granted_a_display_is_not_forked(pool, x11_display):
    server = pool.driver(X11_DRIVER_WASM, extra=["--display", x11_display], label="x11-fork")
    refused = httpx.post(server.url("/fork"))
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "fork_unsupported"
    assert "lives in that X server" in refused.json()["error"]["message"]
    kept = httpx.post(server.url("/snapshot"))
    assert kept.status_code == 409 and kept.json()["error"]["code"] == "fork_unsupported"
    assert [e for e in httpx.get(server.url("/episodes")).json()["episodes"] if not e["root"]] == []


def test_a_driver_importing_x11_without_the_display_grant_is_refused_at_load(envhost_bin, guests):
    done = subprocess.run([str(envhost_bin), "serve", "--driver", str(X11_DRIVER_WASM), "--port", "1"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "RUST_BACKTRACE": "0"})
    assert done.returncode != 0
    assert "imports agentenv:computer/x11@0.1.0, which needs an X display granted to it: serve it with `--display :N`" in done.stderr


def test_the_reference_probe_passes_at_full_against_the_x11_driver_as_an_unprivileged_user(
        envhost_bin, guests, x11_display, tmp_path):
    """The probe's fixture (a Tk app, started through computer-exec) takes the driver's real
    input; commands and data/add must run as one non-root user, so as root the server runs as
    `nobody`, its home a directory of its own."""
    home = Path(tempfile.mkdtemp(prefix="envhost-computer-home-"))
    home.chmod(0o755)
    prefix: list[str] = []
    binary, driver = envhost_bin, X11_DRIVER_WASM
    if os.geteuid() == 0:
        # The checkout may be where nobody cannot read: the server runs from copies in its home.
        bin_dir = home / "bin"
        bin_dir.mkdir()
        binary, driver = bin_dir / "envhost", bin_dir / "x11_driver.wasm"
        shutil.copy2(envhost_bin, binary)
        shutil.copy2(X11_DRIVER_WASM, driver)
        nobody = pwd.getpwnam("nobody")
        for path in (home, bin_dir, binary, driver):
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
        prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    port = free_port()
    argv = [*prefix, str(binary), "serve", "--driver", str(driver), "--display", x11_display,
            "--exec", "--home", str(home), "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "PATH": "/usr/bin:/bin",
           "ENVIRONMENT_NAME": ""}
    log = open(tmp_path / "envhost.log", "wb")
    server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, (tmp_path / "envhost.log").read_text()
            try:
                if httpx.get(url + CARD_PATH, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the driver's server did not start"
            time.sleep(0.1)
        statuses, output = probe(url, "full", tmp_path, 60)
        assert "failed" not in statuses and "unverified" not in statuses, output
        assert statuses.count("passed") >= 48, output
    finally:
        server.terminate()
        server.wait(timeout=10)
        subprocess.run(["rm", "-rf", str(home)], check=False)


def test_the_x11_drivers_card_and_tools_are_the_reference_drivers(pool, x11_display, tmp_path):
    """The differential check: the card and `tools/list` of envhost serving guests/x11-driver
    with commands and a home granted equal the reference driver's (reference/computer/), after
    normalising only what varies: the name and the detected platform."""
    home = tmp_path / "home"
    home.mkdir()
    server = pool.driver(X11_DRIVER_WASM, label="x11-differential",
                         extra=["--display", x11_display, "--exec", "--home", str(home)])
    expected_card = json.loads((REFERENCE / "reference-card.json").read_text())
    card = httpx.get(server.url(CARD_PATH)).json()

    def normalised(card: dict) -> dict:
        card = json.loads(json.dumps(card))
        card["name"] = "driver"
        for extension in card["capabilities"]["extensions"]:
            if extension["uri"] == "urn:agentenv:computer/v1":
                extension["params"]["platform"] = {}
        return card

    assert normalised(card) == normalised(expected_card)
    expected_tools = json.loads((REFERENCE / "reference-tools-list.json").read_text())

    async def listed():
        async with streamablehttp_client(server.mcp_url) as (read, write, _):
            async with ClientSession(read, write) as client:
                await client.initialize()
                return (await client.list_tools()).model_dump(mode="json", exclude_none=True)["tools"]
    assert run(listed()) == expected_tools
