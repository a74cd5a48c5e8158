"""The `computer/v1` contract end to end, against the simulated desk (`guests/desk`) served by
`envhost serve --driver desk.wasm --exec --home DIR`: every tool, every error code the desk can
produce, every extension on the card and the data plane, over real HTTP on 127.0.0.1, tools
through the official MCP client. What an input did is read back from the desk's next frame.

The desk (guests/desk/src/desk.rs) draws, on a 1280×800 display: a `Save N` button counting left
clicks, a `Subscribe` checkbox, a `name` text field (focused by a click, typed characters
appended), a list of `Item 1` to `Item 100` showing 20 rows (a click selects a row, the wheel
scrolls it) and a pad where a left drag draws a red stroke. Its text is read back with the
desk's own glyphs, taken from the labels of a fresh desk (`Reader`).

Every test gets a desk of its own (a server starts in well under a second).

Environment: ENVHOST_BIN (see conftest) and DESK_WASM name the binaries; with both set nothing
is built.
"""
from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import itertools
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import CARD_PATH, Server, ServerPool, rpc, rpc_post, run
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from PIL import Image

pytestmark = pytest.mark.anyio

WIDTH, HEIGHT = 1280, 800
DESKTOP, WHITE, BLACK, GREY = (232, 232, 232), (255, 255, 255), (0, 0, 0), (96, 96, 96)
BLUE, PALE, RED, GREEN = (40, 90, 200), (205, 220, 250), (200, 40, 40), (60, 150, 60)

# The desk's widgets, (left, top, width, height) in screen pixels, as guests/desk/src/desk.rs lays them out.
SAVE = (40, 60, 200, 40)
SUBSCRIBE = (280, 68, 24, 24)
NAME = (40, 130, 560, 36)
LIST = (40, 200, 320, 400)
PAD = (400, 200, 600, 400)
ROW = 20
GLYPH = 16
SAVE_AT = (140, 80)
NAME_AT = (320, 148)

#: The settings of every desk unless a test names its own.
SETTINGS = {"data_paths": ["out", "notes.txt", "missing"], "exec_output_bytes": 1000}

POINT_TOOLS = {"computer_screenshot", "computer_click", "computer_drag", "computer_scroll",
               "computer_pointer_move", "computer_pointer_down", "computer_pointer_up"}
READ_TOOLS = {"computer_screenshot", "computer_wait", "computer_pointer_position", "computer_pointer_list"}
ALL_TOOLS = POINT_TOOLS | READ_TOOLS | {"computer_type", "computer_key", "computer_keyboard_down",
                                        "computer_keyboard_up"}
MARKER = "urn:agentenv:data-objects/v1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ------------------------------------------------------------------------------------- servers

@pytest.fixture(scope="module")
def desk_wasm(request) -> Path:
    """The desk component: $DESK_WASM, else the guests' build."""
    override = os.environ.get("DESK_WASM")
    if override:
        return Path(override).resolve()
    return request.getfixturevalue("guests")["desk"]


@pytest.fixture(scope="module")
def servers(envhost_bin, tmp_path_factory):
    pool = ServerPool(envhost_bin, tmp_path_factory.mktemp("contract-logs"))
    yield pool
    pool.stop_all()


class Desk:
    """A desk served with commands and a home granted."""

    def __init__(self, pool: ServerPool, wasm: Path, home: Path, settings: dict) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.home = home
        self.server: Server = pool.driver(
            wasm, env={"AGENTENV_COMPUTER_SETTINGS": json.dumps(settings)}, label="contract-desk",
            extra=["--exec", "--home", str(home)])

    def url(self, path: str) -> str:
        return self.server.url(path)

    def card(self) -> dict:
        response = httpx.get(self.url(CARD_PATH), timeout=30)
        assert response.status_code == 200, response.text
        return response.json()

    def endpoint(self, name: str, op: str) -> tuple[str, str]:
        """The HTTP verb and URL of method `op` of `urn:agentenv:<name>/v1`, as the card says."""
        params = extension_params(self.card(), name)
        method = params["methods"][op]
        return method.get("method", "POST"), self.url(method.get("endpoint") or params["endpoint"])

    def extension(self, name: str, op: str, body: dict | None = None) -> httpx.Response:
        """Calls method `op` of `urn:agentenv:<name>/v1` (GET: the body as the query)."""
        verb, url = self.endpoint(name, op)
        if verb == "GET":
            return httpx.get(url, params=body, timeout=30)
        return httpx.post(url, json=body if body is not None else {}, timeout=60)

    def exec(self, argv: list[str], request_id: str, **fields: Any) -> httpx.Response:
        return self.extension("computer-exec", "run", {"argv": argv, "request_id": request_id, **fields})


@pytest.fixture
def make_desk(servers, desk_wasm, tmp_path):
    """Starts desks (each stopped after the test): `make_desk(settings=...)`."""
    started: list[Desk] = []

    def make(settings: dict | None = None) -> Desk:
        desk = Desk(servers, desk_wasm, tmp_path / f"home-{len(started)}", settings or SETTINGS)
        started.append(desk)
        return desk

    yield make
    for desk in started:
        desk.server.stop()


@pytest.fixture
def desk(make_desk) -> Desk:
    return make_desk()


def extension_params(card: dict, name: str) -> dict:
    uri = f"urn:agentenv:{name}/v1"
    found = [e for e in card["capabilities"]["extensions"] if e["uri"] == uri]
    assert len(found) == 1, f"{uri} is not on the card"
    return found[0]["params"]


# ------------------------------------------------------------------------------------- MCP

class Agent:
    """One MCP session on a desk, through the official client (which validates every
    successful result's structuredContent against the tool's outputSchema)."""

    def __init__(self, client: ClientSession) -> None:
        self.client = client

    async def call(self, tool: str, **arguments: Any):
        """A successful call: its CallToolResult, its text block checked to be its summary."""
        result = await self.client.call_tool(tool, arguments)
        assert not result.isError, f"{tool} {arguments}: {result.content}"
        assert result.content[0].text == result.structuredContent["summary"]
        return result

    async def refused(self, tool: str, **arguments: Any) -> dict:
        """A refused call: its error's structuredContent, its text block checked to be
        `<code>: <message>`."""
        result = await self.client.call_tool(tool, arguments)
        assert result.isError, f"{tool} {arguments} was not refused: {result.structuredContent}"
        error = result.structuredContent
        assert result.content[0].text == f"{error['code']}: {error['message']}"
        return error

    async def shot(self, **arguments: Any) -> tuple[dict, Image.Image]:
        """A screenshot: its frame data and its image, in RGB."""
        result = await self.call("computer_screenshot", **arguments)
        return result.structuredContent, picture(result)

    async def where(self, **arguments: Any) -> dict:
        return (await self.call("computer_pointer_position", **arguments)).structuredContent


@contextlib.asynccontextmanager
async def session(desk: Desk, role: str | None = None):
    headers = {"AgentEnv-Role": role} if role else {}
    async with (httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30, read=300)) as http,
                streamable_http_client(desk.url("/mcp"), http_client=http) as (read, write, _),
                ClientSession(read, write) as client):
        await client.initialize()
        yield Agent(client)


def picture(result) -> Image.Image:
    """The image block of a tool result, decoded to RGB."""
    assert len(result.content) == 2 and result.content[1].type == "image", result.content
    return Image.open(io.BytesIO(base64.b64decode(result.content[1].data))).convert("RGB")


def pixels(image: Image.Image) -> bytes:
    return image.tobytes()


# ------------------------------------------------------------------------------------- reading the desk

def ink_mask(image: Image.Image, x: int, y: int, ink: tuple) -> bytes:
    """Which pixels of the glyph cell at (x, y) are `ink`."""
    return bytes(image.getpixel((x + i, y + j)) == ink for j in range(GLYPH) for i in range(GLYPH))


class Reader:
    """Reads the desk's text with its own glyphs, taken from a fresh desk's labels: the title
    `Desk`, `Save 0`, `Subscribe` and the list's `Item 1` to `Item 20` (digits, `I t e m D s k S
    a v u b c r i` and space)."""

    def __init__(self, fresh: Image.Image) -> None:
        labels = [(12, 12, "Desk", WHITE), (52, 72, "Save 0", WHITE), (316, 72, "Subscribe", BLACK)]
        labels += [(48, LIST[1] + row * ROW + 2, f"Item {row + 1}", BLACK) for row in range(20)]
        self.glyphs: dict[bytes, str] = {}
        for x, y, text, ink in labels:
            for i, char in enumerate(text):
                known = self.glyphs.setdefault(ink_mask(fresh, x + i * GLYPH, y, ink), char)
                assert known == char, f"{char!r} and {known!r} are drawn alike"

    def read(self, image: Image.Image, x: int, y: int, cells: int, ink: tuple) -> str:
        return "".join(self.glyphs.get(ink_mask(image, x + i * GLYPH, y, ink), "?")
                       for i in range(cells)).rstrip()

    def saved(self, image: Image.Image) -> int:
        label = self.read(image, SAVE[0] + 12, SAVE[1] + 12, 11, WHITE)
        assert label.startswith("Save "), label
        return int(label.removeprefix("Save "))

    def name(self, image: Image.Image) -> str:
        return self.read(image, NAME[0] + 8, NAME[1] + 10, (NAME[2] - 16) // GLYPH, BLACK)

    def row(self, image: Image.Image, row: int) -> str:
        return self.read(image, LIST[0] + 8, LIST[1] + row * ROW + 2, 18, BLACK)


@pytest.fixture(scope="module")
def reader(servers, desk_wasm, tmp_path_factory) -> Reader:
    desk = Desk(servers, desk_wasm, tmp_path_factory.mktemp("reader-home"), SETTINGS)

    async def first_frame() -> Image.Image:
        async with session(desk) as agent:
            return (await agent.shot())[1]
    try:
        return Reader(run(first_frame()))
    finally:
        desk.server.stop()


def subscribed(image: Image.Image) -> bool:
    return image.getpixel((SUBSCRIBE[0] + 12, SUBSCRIBE[1] + 12)) == GREEN


def name_focused(image: Image.Image) -> bool:
    border = image.getpixel((NAME[0], NAME[1]))
    assert border in (BLUE, GREY), border
    return border == BLUE


def selected_rows(image: Image.Image) -> list[int]:
    return [row for row in range(20) if image.getpixel((LIST[0] + 2, LIST[1] + row * ROW + 1)) == PALE]


def red_on_pad(image: Image.Image) -> set[tuple[int, int]]:
    x0, y0, w, h = PAD
    return {(x, y) for x in range(x0, x0 + w) for y in range(y0, y0 + h) if image.getpixel((x, y)) == RED}


def stroke(points: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The pixels the desk paints for a stroke through `points`: each segment stepped along its
    longer axis (integer division toward zero), a 2×2 square at each step."""
    def toward_zero(a: int, b: int) -> int:
        return abs(a) // b * (1 if a >= 0 else -1)

    lit = set()
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            x, y = x0 + toward_zero((x1 - x0) * i, steps), y0 + toward_zero((y1 - y0) * i, steps)
            lit |= {(x + dx, y + dy) for dx in (0, 1) for dy in (0, 1)}
    return lit


async def focus_name(agent: Agent) -> None:
    await agent.shot()
    await agent.call("computer_click", x=NAME_AT[0], y=NAME_AT[1])


# ------------------------------------------------------------------------------------- tools

async def test_tools_list_has_the_seven_tools_and_both_groups_with_schemas_and_annotations(desk):
    async with session(desk) as agent:
        tools = (await agent.client.list_tools()).tools
    assert {t.name for t in tools} == ALL_TOOLS
    for tool in tools:
        assert tool.inputSchema.get("properties") is not None and tool.outputSchema, tool.name
        if tool.name in READ_TOOLS:
            assert (tool.annotations.readOnlyHint, tool.annotations.openWorldHint) == (True, False), tool.name
        else:
            assert tool.annotations.readOnlyHint is False and tool.annotations.destructiveHint is False, tool.name
            assert tool.annotations.idempotentHint is False, tool.name
    frame_space = "Points are in frame space by default: pixels of the frame's image."
    assert {t.name for t in tools if t.description.endswith(frame_space)} == POINT_TOOLS


async def test_a_screenshot_is_a_native_png_whose_frame_data_matches_its_image(desk):
    async with session(desk) as agent:
        first = await agent.call("computer_screenshot")
        second = await agent.call("computer_screenshot")
    frame = first.structuredContent
    assert first.content[1].mimeType == "image/png"
    image = Image.open(io.BytesIO(base64.b64decode(first.content[1].data)))
    assert image.format == "PNG" and image.size == (WIDTH, HEIGHT)
    assert frame["width"] == WIDTH and frame["height"] == HEIGHT
    assert frame["display"] == {"width": WIDTH, "height": HEIGHT, "scale": 1.0}
    assert "parent_frame_id" not in frame
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", frame["captured_at"])
    assert frame["summary"] == f"Captured {frame['frame_id']}: 1280×800 of the 1280×800 display"
    ids = [int(r.structuredContent["frame_id"].removeprefix("f")) for r in (first, second)]
    assert ids[1] == ids[0] + 1
    rgb = image.convert("RGB")
    assert rgb.getpixel((5, 5)) == BLUE and rgb.getpixel((SAVE_AT[0], SAVE[1] + 2)) == GREY
    assert rgb.getpixel((700, 700)) == DESKTOP and rgb.getpixel((PAD[0] + 50, PAD[1] + 50)) == WHITE


async def test_a_region_is_a_pixel_exact_crop_of_its_parent_frame_in_either_space(desk):
    async with session(desk) as agent:
        parent, whole = await agent.shot()
        crop = await agent.call("computer_screenshot", region=[270, 60, 330, 100], frame_id=parent["frame_id"])
        norm = await agent.call("computer_screenshot", region=[250, 250, 500, 750], space="norm",
                                frame_id=parent["frame_id"])
    data = crop.structuredContent
    assert (data["width"], data["height"], data["parent_frame_id"]) == (60, 40, parent["frame_id"])
    assert data["summary"] == f"Cropped {data['frame_id']}: 60×40 of {parent['frame_id']} at (270, 60)"
    assert data["captured_at"] == parent["captured_at"]
    assert pixels(picture(crop)) == pixels(whole.crop((270, 60, 330, 100)))
    data = norm.structuredContent
    assert (data["width"], data["height"]) == (320, 400)
    assert data["summary"] == f"Cropped {data['frame_id']}: 320×400 of {parent['frame_id']} at (320, 200)"
    assert pixels(picture(norm)) == pixels(whole.crop((320, 200, 640, 600)))


async def test_format_jpeg_answers_a_jpeg_of_the_same_picture_whole_or_cropped(desk):
    async with session(desk) as agent:
        parent, whole = await agent.shot()
        jpeg = await agent.call("computer_screenshot", format="jpeg", quality=60)
        cropped = await agent.call("computer_screenshot", format="jpeg", region=[0, 0, 400, 120],
                                   frame_id=parent["frame_id"])
    for result, size in ((jpeg, (WIDTH, HEIGHT)), (cropped, (400, 120))):
        assert result.content[1].mimeType == "image/jpeg"
        image = Image.open(io.BytesIO(base64.b64decode(result.content[1].data)))
        assert image.format == "JPEG" and image.size == size
        assert (result.structuredContent["width"], result.structuredContent["height"]) == size
        rgb = image.convert("RGB")
        for point in ((200, 20), (60, 100), (300, 110)):
            got, want = rgb.getpixel(point), whole.getpixel(point)
            assert max(abs(a - b) for a, b in zip(got, want, strict=True)) <= 12, (point, got, want)


async def test_a_click_on_save_counts_each_click_and_shows_in_the_next_frame(desk, reader):
    async with session(desk) as agent:
        frame, before = await agent.shot()
        assert reader.saved(before) == 0
        once = await agent.call("computer_click", x=SAVE_AT[0], y=SAVE_AT[1])
        assert once.structuredContent == {
            "summary": f"Clicked left at (140, 80) in {frame['frame_id']}", "applied": "yes",
            "delivery": "foreground", "others_since_frame": 0}
        assert len(once.content) == 1
        triple = await agent.call("computer_click", x=SAVE_AT[0], y=SAVE_AT[1], count=3, screenshot=True)
    after = triple.structuredContent
    assert after["summary"] == (f"Clicked left ×3 at (140, 80) in {frame['frame_id']}, "
                                f"then captured {after['frame']['frame_id']}")
    assert reader.saved(picture(triple)) == 4


async def test_a_click_toggles_the_checkbox_and_selects_the_list_row_under_it(desk):
    async with session(desk) as agent:
        _, before = await agent.shot()
        assert not subscribed(before) and selected_rows(before) == []
        await agent.call("computer_click", x=290, y=80)
        _, ticked = await agent.shot()
        await agent.call("computer_click", x=100, y=LIST[1] + 7 * ROW + 3)
        _, selected = await agent.shot()
        await agent.call("computer_click", x=290, y=80)
        _, unticked = await agent.shot()
    assert subscribed(ticked) and selected_rows(ticked) == []
    assert subscribed(selected) and selected_rows(selected) == [7]
    assert not subscribed(unticked) and selected_rows(unticked) == [7]


async def test_a_drag_on_the_pad_draws_its_path_and_one_starting_off_the_pad_draws_nothing(desk):
    path = [(450, 250), (700, 300), (900, 550)]
    async with session(desk) as agent:
        frame, before = await agent.shot()
        dragged = await agent.call("computer_drag", path=[list(p) for p in path], duration_ms=400)
        _, after = await agent.shot()
        await agent.call("computer_drag", path=[[100, 700], [500, 300], [600, 400]])
        _, off_pad = await agent.shot()
    assert dragged.structuredContent["summary"] == f"Dragged left through 3 points of {frame['frame_id']} in 400 ms"
    assert red_on_pad(before) == set()
    assert red_on_pad(after) == stroke(path)
    assert pixels(off_pad) == pixels(after)


async def test_scroll_moves_the_list_by_its_notches_and_only_over_the_list(desk, reader):
    over_list = (200, 400)
    async with session(desk) as agent:
        frame, before = await agent.shot()
        down = await agent.call("computer_scroll", direction="down", amount=5, x=over_list[0], y=over_list[1])
        _, scrolled = await agent.shot()
        await agent.call("computer_scroll", direction="up", amount=2, x=over_list[0], y=over_list[1])
        await agent.call("computer_scroll", direction="down", amount=9, x=700, y=400)
        await agent.call("computer_scroll", direction="right", amount=4, x=over_list[0], y=over_list[1])
        _, back = await agent.shot()
        await agent.call("computer_scroll", direction="down", amount=100, x=over_list[0], y=over_list[1])
        _, bottom = await agent.shot()
    assert down.structuredContent["summary"] == f"Scrolled down 5 at (200, 400) in {frame['frame_id']}"
    assert [reader.row(before, 0), reader.row(before, 19)] == ["Item 1", "Item 20"]
    assert [reader.row(scrolled, 0), reader.row(scrolled, 19)] == ["Item 6", "Item 25"]
    assert reader.row(back, 0) == "Item 4"
    assert [reader.row(bottom, 0), reader.row(bottom, 19)] == ["Item 81", "Item 100"]


async def test_typed_text_lands_in_the_focused_field_and_keys_edit_it(desk, reader):
    async with session(desk) as agent:
        await focus_name(agent)
        typed = await agent.call("computer_type", text="Subscribe 2")
        _, after_type = await agent.shot()
        backspace = await agent.call("computer_key", keys=["backspace"], repeat=3)
        await agent.call("computer_key", keys=["Escape"])
        _, after_keys = await agent.shot()
        await agent.call("computer_type", text="Desk")
        _, unfocused = await agent.shot()
    assert typed.structuredContent["summary"] == "Typed 11 characters"
    assert reader.name(after_type) == "Subscribe 2" and name_focused(after_type)
    assert backspace.structuredContent["summary"] == "Pressed Backspace ×3"
    assert reader.name(after_keys) == "Subscrib" and not name_focused(after_keys)
    assert pixels(unfocused) == pixels(after_keys)


async def test_wait_sleeps_its_ms_and_captures_after_only_when_asked(desk):
    async with session(desk) as agent:
        started = time.monotonic()
        plain = await agent.call("computer_wait", ms=300)
        slept = time.monotonic() - started
        captured = await agent.call("computer_wait", ms=10, screenshot=True)
    assert slept >= 0.3
    assert plain.structuredContent == {"summary": "Waited 300 ms", "waited_ms": 300}
    assert len(plain.content) == 1
    frame = captured.structuredContent["frame"]
    assert captured.structuredContent["summary"] == f"Waited 10 ms, then captured {frame['frame_id']}"
    assert picture(captured).size == (frame["width"], frame["height"]) == (WIDTH, HEIGHT)


async def test_pointer_move_and_position_agree_in_screen_frame_and_crop_pixels(desk):
    async with session(desk) as agent:
        frame, _ = await agent.shot()
        assert (await agent.where())["frame_id"] == frame["frame_id"]
        moved = await agent.call("computer_pointer_move", x=333, y=444)
        whole = await agent.where()
        crop, _ = await agent.shot(region=[600, 400, 700, 500], frame_id=frame["frame_id"])
        in_crop = await agent.where()
        outside = await agent.where(frame_id=crop["frame_id"])
        await agent.call("computer_pointer_move", x=50, y=60)
        inside = await agent.where()
    assert moved.structuredContent["summary"] == f"Moved the pointer at (333, 444) in {frame['frame_id']}"
    assert whole == {"summary": f"The pointer is (333, 444) in {frame['frame_id']}, screen (333, 444)",
                     "screen": {"x": 333, "y": 444}, "frame_id": frame["frame_id"], "x": 333, "y": 444,
                     "inside_frame": True}
    assert in_crop == outside
    assert (outside["x"], outside["y"], outside["inside_frame"]) == (-267, 44, False)
    assert outside["summary"] == (f"The pointer is outside {crop['frame_id']}, at (-267, 44) in its pixels, "
                                  "screen (333, 444)")
    assert inside["screen"] == {"x": 650, "y": 460}
    assert (inside["x"], inside["y"], inside["inside_frame"]) == (50, 60, True)


async def test_pointer_down_and_up_draw_a_stroke_through_the_moves_or_click_in_place(desk, reader):
    points = [(420, 220), (600, 500), (800, 260), (980, 580)]
    async with session(desk) as agent:
        frame, _ = await agent.shot()
        down = await agent.call("computer_pointer_down", x=points[0][0], y=points[0][1])
        for x, y in points[1:-1]:
            await agent.call("computer_pointer_move", x=x, y=y)
        up = await agent.call("computer_pointer_up", x=points[-1][0], y=points[-1][1])
        await agent.call("computer_pointer_down", x=SAVE_AT[0], y=SAVE_AT[1])
        released = await agent.call("computer_pointer_up")
        _, after = await agent.shot()
    assert down.structuredContent["summary"] == f"Pressed left at (420, 220) in {frame['frame_id']}"
    assert up.structuredContent["summary"] == f"Released left at (980, 580) in {frame['frame_id']}"
    assert released.structuredContent["summary"] == "Released left"
    assert red_on_pad(after) == stroke(points)
    assert reader.saved(after) == 1


async def test_a_click_and_a_scroll_without_a_point_act_at_the_pointer(desk, reader):
    async with session(desk) as agent:
        await agent.shot()
        await agent.call("computer_pointer_move", x=SAVE_AT[0], y=SAVE_AT[1])
        click = await agent.call("computer_click")
        await agent.call("computer_pointer_move", x=100, y=300)
        scroll = await agent.call("computer_scroll", direction="down", amount=7)
        _, after = await agent.shot()
    assert click.structuredContent["summary"] == "Clicked left at the pointer, screen (140, 80)"
    assert scroll.structuredContent["summary"] == "Scrolled down 7 at the pointer, screen (100, 300)"
    assert reader.saved(after) == 1 and reader.row(after, 0) == "Item 8"


async def test_pointer_list_names_one_default_pointer(desk):
    async with session(desk) as agent:
        listed = await agent.call("computer_pointer_list")
    assert listed.structuredContent == {
        "summary": "1 pointer: default (foreground)",
        "pointers": [{"id": "default", "kind": "foreground", "label": "The computer's pointer", "default": True}]}


async def test_keyboard_down_holds_shift_across_typing_until_keyboard_up(desk, reader):
    async with session(desk) as agent:
        await focus_name(agent)
        held = await agent.call("computer_keyboard_down", keys=["shift"])
        await agent.call("computer_type", text="is")
        released = await agent.call("computer_keyboard_up")
        await agent.call("computer_type", text="is")
        nothing_held = await agent.refused("computer_keyboard_up")
        _, after = await agent.shot()
    assert held.structuredContent["summary"] == "Pressed and held Shift"
    assert released.structuredContent["summary"] == "Released Shift"
    assert nothing_held["message"] == "you are holding no keys"
    assert reader.name(after) == "ISis"


async def test_keyboard_down_with_hold_ms_holds_for_that_long_then_releases(desk, reader):
    async with session(desk) as agent:
        await focus_name(agent)
        started = time.monotonic()
        held = await agent.call("computer_keyboard_down", keys=["Shift"], hold_ms=400)
        took = time.monotonic() - started
        await agent.call("computer_type", text="ab")
        _, after = await agent.shot()
    assert held.structuredContent["summary"] == "Held Shift for 400 ms"
    assert took >= 0.4
    assert reader.name(after) == "ab"


async def test_keys_held_by_hold_ms_are_released_before_the_next_input_when_the_caller_leaves(desk, reader):
    async with session(desk) as agent:
        await focus_name(agent)
        async with session(desk) as leaving:
            hold = asyncio.create_task(leaving.call("computer_keyboard_down", keys=["Shift"], hold_ms=1500))
            await asyncio.sleep(0.3)
            hold.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await hold
        started = time.monotonic()
        await agent.call("computer_type", text="ab")
        waited = time.monotonic() - started
        _, after = await agent.shot()
    assert reader.name(after) == "ab", "Shift was still down after its caller left"
    assert waited >= 0.8, "the next input did not wait for the hold's release"


# ------------------------------------------------------------------------------------- landing on the pixel

async def test_a_norm_click_lands_on_the_exact_pixel_it_names(desk):
    def norm(x: int, y: int) -> dict:
        return {"x": x * 1000 / WIDTH, "y": y * 1000 / HEIGHT, "space": "norm"}

    async with session(desk) as agent:
        frame, _ = await agent.shot()
        left_of_box = await agent.call("computer_click", **norm(SUBSCRIBE[0] - 1, SUBSCRIBE[1]), screenshot=True)
        pointer_outside = await agent.where()
        box_corner = await agent.call("computer_click", **norm(SUBSCRIBE[0], SUBSCRIBE[1]), screenshot=True)
        pointer_inside = await agent.where()
    assert left_of_box.structuredContent["summary"].startswith(
        f"Clicked left at (217.969, 85) (norm 1000) in {frame['frame_id']}")
    assert pointer_outside["screen"] == {"x": 279, "y": 68}
    assert not subscribed(picture(left_of_box))
    assert pointer_inside["screen"] == {"x": 280, "y": 68}
    assert subscribed(picture(box_corner))


async def test_a_click_relative_to_a_crop_lands_on_the_pixel_under_it(desk):
    async with session(desk) as agent:
        parent, _ = await agent.shot()
        crop, _ = await agent.shot(region=[270, 60, 330, 100], frame_id=parent["frame_id"])
        await agent.call("computer_click", x=9, y=8, frame_id=crop["frame_id"])
        missed = await agent.where()
        _, after_miss = await agent.shot()
        await agent.call("computer_click", x=10, y=8, frame_id=crop["frame_id"])
        hit = await agent.where()
        await agent.shot()
        listed, _ = await agent.shot(region=[LIST[0], LIST[1], LIST[0] + LIST[2], LIST[1] + LIST[3]])
        latest = await agent.call("computer_click", x=500, y=512.5, space="norm")
        on_row = await agent.where()
        _, after = await agent.shot()
    assert missed["screen"] == {"x": 279, "y": 68} and not subscribed(after_miss)
    assert hit["screen"] == {"x": 280, "y": 68}
    assert latest.structuredContent["summary"] == f"Clicked left at (500, 512.5) (norm 1000) in {listed['frame_id']}"
    assert on_row["screen"] == {"x": 200, "y": 405}
    assert subscribed(after) and selected_rows(after) == [10]


# ------------------------------------------------------------------------------------- concurrency

@pytest.mark.parametrize("sessions", [1, 4])
async def test_sixteen_concurrent_clicks_all_land(desk, reader, sessions):
    async with contextlib.AsyncExitStack() as stack:
        agents = [await stack.enter_async_context(session(desk)) for _ in range(sessions)]
        latest = [(await agent.shot())[0] for agent in agents][-1]
        clicks = await asyncio.gather(*(
            agents[i % sessions].call("computer_click", x=SAVE_AT[0], y=SAVE_AT[1]) for i in range(16)))
        _, after = await agents[0].shot()
    for click in clicks:
        assert click.structuredContent["applied"] == "yes"
        assert click.structuredContent["summary"] == f"Clicked left at (140, 80) in {latest['frame_id']}"
    assert reader.saved(after) == 16


async def test_queued_clicks_and_typing_land_in_the_order_they_arrived(desk, reader):
    """The desk keeps no history of clicks, so each click is followed by typing one character:
    a character stays only when the click before it focused the name field (a click on Save
    unfocuses it). The calls are sent 60 ms apart while the queue is held, so all 32 wait in the
    queue together and their arrival order is known."""
    targets = "NSNNSNSSNNSNSNNS"
    characters = "0123456789abcekm"
    async with session(desk) as agent:
        await agent.shot()
        hold = asyncio.create_task(agent.call("computer_keyboard_down", keys=["Alt"], hold_ms=4000))
        await asyncio.sleep(0.3)
        calls = []
        for target, character in zip(targets, characters, strict=True):
            x, y = NAME_AT if target == "N" else SAVE_AT
            calls.append(asyncio.create_task(agent.call("computer_click", x=x, y=y)))
            await asyncio.sleep(0.06)
            calls.append(asyncio.create_task(agent.call("computer_type", text=character)))
            await asyncio.sleep(0.06)
        assert not hold.done(), "the queue was released before every call was waiting in it"
        await asyncio.gather(hold, *calls)
        _, after = await agent.shot()
    expected = "".join(c for t, c in zip(targets, characters, strict=True) if t == "N")
    assert reader.name(after) == expected
    assert reader.saved(after) == targets.count("S")


# ------------------------------------------------------------------------------------- refusals

#: Refusals the desk can produce through its tools: (tool, arguments, code, message, hint).
#: `{f}` is the id of the frame taken just before. The codes the desk cannot produce:
#: device_unavailable (the desk is always ready: its display and capture never fail and it has no
#: checks of its own), delivery_failed and internal (its operations never fail or trap on input the
#: host lets through), and background_unavailable, target_unavailable, limit_exceeded and timeout (reserved; no desk
#: operation raises them).
REFUSALS = [
    ("computer_click", {"x": WIDTH, "y": 0, "frame_id": "{f}"}, "out_of_bounds",
     "(1280, 0) is outside frame {f} (1280×800)", None),
    ("computer_click", {"x": 1001, "y": 3, "space": "norm"}, "out_of_bounds",
     "(1001, 3) is outside the norm range 0..1000 of frame {f}", None),
    ("computer_drag", {"path": [[140, 80], [140, 800]]}, "out_of_bounds", "(140, 800) is outside frame {f} (1280×800)",
     None),
    ("computer_screenshot", {"region": [10, 10, 10, 20], "frame_id": "{f}"}, "out_of_bounds",
     "region [10, 10, 10, 20] is not a non-empty box within frame {f} (1280×800)", None),
    ("computer_click", {"x": 140, "y": 80, "frame_id": "f999999999"}, "stale_frame",
     "frame f999999999 is unknown or no longer kept: take a new screenshot", None),
    ("computer_click", {"x": 140, "y": 80, "button": "right"}, "unsupported",
     "this computer has no right button; it has left", None),
    ("computer_key", {"keys": ["ctrl", "s"]}, "invalid_argument", "'ctrl' is not a W3C key value",
     "did you mean Control?"),
    ("computer_key", {"keys": ["Control+s"]}, "invalid_argument", "'Control+s' is not a W3C key value",
     "one key per entry: keys is a list, such as ['Control', 's']"),
    ("computer_key", {"keys": ["Backspace"], "repeat": 101}, "invalid_argument",
     "repeat is from 1 to 100 on this computer, got 101", None),
    ("computer_type", {"text": "a\u001bb\u0007"}, "invalid_argument",
     "text has control characters ['U+0007', 'U+001B']; press keys with computer_key", None),
    ("computer_type", {"text": ""}, "invalid_argument", "text is empty", None),
    ("computer_type", {"text": "a" * 10001}, "invalid_argument",
     "text is at most 10000 characters on this computer, got 10001", None),
    ("computer_click", {"x": 140, "y": 80, "count": 4}, "invalid_argument",
     "count is from 1 to 3 on this computer, got 4", None),
    ("computer_click", {"x": 140}, "invalid_argument", "give x and y, or neither to act at the pointer", None),
    ("computer_click", {"x": 140, "y": 80, "norm_scale": 0, "space": "norm"}, "invalid_argument",
     "norm_scale is an integer from 1 to 1000000, got 0", None),
    ("computer_screenshot", {"region": [0, 0, 10], "frame_id": "{f}"}, "invalid_argument",
     "region is [x0, y0, x1, y1], got 3 numbers", None),
    ("computer_screenshot", {"frame_id": "{f}"}, "invalid_argument",
     "frame_id names the frame a region crops; give a region too", None),
    ("computer_drag", {"path": [[450, 250]]}, "invalid_argument", "path has from 2 to 50 points on this computer",
     None),
    ("computer_scroll", {"direction": "down", "amount": 0, "x": 200, "y": 400}, "invalid_argument",
     "amount is from 1 to 100 on this computer, got 0", None),
    ("computer_wait", {"ms": 60001}, "invalid_argument", "ms is from 0 to 60000 on this computer, got 60001", None),
    ("computer_keyboard_down", {"keys": ["Shift"], "hold_ms": 10001}, "invalid_argument",
     "hold_ms is from 0 to 10000, got 10001", None),
    ("computer_keyboard_up", {}, "invalid_argument", "you are holding no keys", None),
    ("computer_pointer_down", {"x": 140}, "invalid_argument", "give both x and y, or neither", None),
]


@pytest.mark.parametrize(("tool", "arguments", "code", "message", "hint"), REFUSALS,
                         ids=[f"{r[0].removeprefix('computer_')}-{r[2]}-{i}" for i, r in enumerate(REFUSALS)])
async def test_a_refused_call_answers_its_code_with_applied_no_and_changes_nothing(
        desk, tool, arguments, code, message, hint):
    """The name field is focused first, so a refused call that acted anyway would show: a click
    anywhere but the field unfocuses it, typing or a key edits it, a drag draws."""
    async with session(desk) as agent:
        await focus_name(agent)
        frame, before = await agent.shot()
        pointer = (await agent.where())["screen"]
        filled = json.loads(json.dumps(arguments).replace("{f}", frame["frame_id"]))
        error = await agent.refused(tool, **filled)
        _, after = await agent.shot()
        assert (await agent.where())["screen"] == pointer
    retryable = code == "stale_frame"
    expected = {"code": code, "message": message.replace("{f}", frame["frame_id"]), "retryable": retryable,
                "applied": "no"}
    if hint is not None:
        expected["hint"] = hint
    assert error == expected
    assert pixels(after) == pixels(before)


async def test_a_click_before_any_screenshot_is_refused_stale_frame(desk):
    async with session(desk) as agent:
        error = await agent.refused("computer_click", x=1, y=1)
    assert error == {"code": "stale_frame", "message": "there is no frame yet: take a screenshot first",
                     "retryable": True, "applied": "no"}


async def test_a_frame_older_than_the_last_64_is_refused_stale_frame(desk):
    async with session(desk) as agent:
        oldest, _ = await agent.shot()
        for _ in range(63):
            await agent.call("computer_screenshot")
        await agent.call("computer_click", x=5, y=5, frame_id=oldest["frame_id"])
        await agent.call("computer_screenshot")
        error = await agent.refused("computer_click", x=5, y=5, frame_id=oldest["frame_id"])
    assert error == {"code": "stale_frame", "retryable": True, "applied": "no",
                     "message": f"frame {oldest['frame_id']} is unknown or no longer kept: take a new screenshot"}


async def test_input_waiting_past_queue_wait_s_is_refused_input_busy_and_never_lands(make_desk, reader):
    desk = make_desk({**SETTINGS, "queue_wait_s": 0.5})
    async with session(desk) as agent:
        await agent.shot()
        hold = asyncio.create_task(agent.call("computer_keyboard_down", keys=["Alt"], hold_ms=2000))
        await asyncio.sleep(0.3)
        started = time.monotonic()
        error = await agent.refused("computer_click", x=SAVE_AT[0], y=SAVE_AT[1])
        waited = time.monotonic() - started
        during, _ = await agent.shot()
        await hold
        _, after = await agent.shot()
        later = await agent.call("computer_click", x=SAVE_AT[0], y=SAVE_AT[1], screenshot=True)
    assert error == {"code": "input_busy", "message": "waited 0.5 s for earlier input to finish",
                     "retryable": True, "applied": "no"}
    assert 0.5 <= waited < 1.7
    assert during["frame_id"]
    assert reader.saved(after) == 0 and reader.saved(picture(later)) == 1


# ------------------------------------------------------------------------------------- extensions

EXTENSIONS = [
    "urn:agentenv:computer-display/v1", "urn:agentenv:computer-exec/v1", "urn:agentenv:computer-keyboard/v1",
    "urn:agentenv:computer-ready/v1", "urn:agentenv:computer-spaces/v1", "urn:agentenv:computer/v1",
    "urn:agentenv:computer-pointer/v1", "urn:agentenv:intake/v1", "urn:agentenv:disable-tool/v1",
    "urn:agentenv:enable-tool/v1", "urn:agentenv:data-objects/v1",
]


def test_the_card_declares_every_extension_and_each_read_route_answers(desk):
    """Routes are found from the card; the desk has display modes, so computer-display offers
    `set`."""
    card = desk.card()
    assert [e["uri"] for e in card["capabilities"]["extensions"]] == EXTENSIONS
    assert card["capabilities"]["operations"] == ["data/add", "data/get"]
    assert {t["name"] for t in card["capabilities"]["tools"]} == ALL_TOOLS
    assert extension_params(card, "computer-exec")["max_output_bytes"] == SETTINGS["exec_output_bytes"]
    assert extension_params(card, "intake")["add"] == [{"part": "data", "format": "json", "load": "replace"},
                                                        {"part": "file", "format": "file-tree", "load": "additive"}]
    features = extension_params(card, "computer")
    assert (features["buttons"], features["max_click_count"], features["max_drag_points"]) == (["left"], 3, 50)
    for name in ("computer-display", "computer-keyboard", "computer-ready", "computer-spaces"):
        for op, method in extension_params(card, name)["methods"].items():
            if method["method"] == "GET":
                response = desk.extension(name, op)
                assert response.status_code == 200 and isinstance(response.json(), dict), (name, op)
    assert list(extension_params(card, "computer-display")["methods"]) == ["get", "set"]
    assert extension_params(card, "computer-display")["modes"] == [[1280, 800], [1024, 768]]


def test_computer_ready_reports_its_display_and_capture_checks(desk):
    status = desk.extension("computer-ready", "status")
    assert status.status_code == 200
    assert status.json() == {"ready": True, "checks": [
        {"name": "display", "ok": True, "detail": "1280×800 at scale 1"},
        {"name": "capture", "ok": True, "detail": "1280×800"}]}


async def test_computer_display_get_matches_the_frames(desk):
    async with session(desk) as agent:
        frame, _ = await agent.shot()
    display = desk.extension("computer-display", "get").json()
    assert display == {"width": WIDTH, "height": HEIGHT, "scale": 1.0, "modes": [[1280, 800], [1024, 768]]}
    assert frame["display"] == {k: display[k] for k in ("width", "height", "scale")}


async def test_computer_display_set_changes_the_display_and_stales_older_frames(desk):
    modes = [[1280, 800], [1024, 768]]
    async with session(desk) as agent:
        old, _ = await agent.shot()
        for body, status, code, message in [
            ({"width": 800, "height": 600}, 400, "invalid_argument",
             "800×600 is not one of this computer's display modes: 1280×800, 1024×768"),
            ({"width": 1024, "height": 768, "scale": 2}, 501, "unsupported", "the desk draws at scale 1 only"),
            ({"width": "wide", "height": 768}, 400, "invalid_argument", 'width is an integer, got "wide"'),
            ({"height": 768}, 400, "invalid_params", "missing a required argument: 'width'"),
        ]:
            refused = desk.extension("computer-display", "set", body)
            assert refused.status_code == status, refused.text
            assert (refused.json()["error"]["code"], refused.json()["error"]["message"]) == (code, message)
        assert desk.extension("computer-display", "get").json()["width"] == WIDTH

        changed = desk.extension("computer-display", "set", {"width": 1024, "height": 768})
        assert changed.status_code == 200, changed.text
        assert changed.json() == {"width": 1024, "height": 768, "scale": 1.0, "modes": modes}
        stale = await agent.refused("computer_click", x=10, y=10, frame_id=old["frame_id"])
        assert stale["code"] == "stale_frame"
        assert stale["message"] == (f"frame {old['frame_id']} was captured at 1280×800 at scale 1 and the "
                                    "display is now 1024×768 at scale 1: take a new screenshot")
        new, image = await agent.shot()
        assert (new["width"], new["height"]) == image.size == (1024, 768)
        assert new["display"] == {"width": 1024, "height": 768, "scale": 1.0}
        back = desk.extension("computer-display", "set", {"width": 1280, "height": 800})
        assert back.json()["width"] == 1280
        _, image = await agent.shot()
        assert image.size == (1280, 800)


async def test_computer_spaces_set_rewrites_point_tool_descriptions_live_and_changes_the_default(desk, reader):
    norm = " Points are in norm space by default: 0 to 500 over the frame, so send x and y on that grid."
    frame_space = " Points are in frame space by default: pixels of the frame's image."
    async with session(desk) as agent:
        before = {t.name: t.description for t in (await agent.client.list_tools()).tools}
        changed = desk.extension("computer-spaces", "set", {"default_space": "norm", "default_norm_scale": 500})
        live = {t.name: t.description for t in (await agent.client.list_tools()).tools}
        on_card = {t["name"]: t["description"] for t in desk.card()["capabilities"]["tools"]}
        frame, _ = await agent.shot()
        click = await agent.call("computer_click", x=SAVE_AT[0] * 500 / WIDTH, y=SAVE_AT[1] * 500 / HEIGHT)
        where = await agent.where()
        got = desk.extension("computer-spaces", "get").json()
        restored = desk.extension("computer-spaces", "set", {"default_space": "frame", "default_norm_scale": 1000})
        after = {t.name: t.description for t in (await agent.client.list_tools()).tools}
        _, image = await agent.shot()
    assert changed.status_code == 200 and changed.json() == {"default_space": "norm", "default_norm_scale": 500}
    assert got == changed.json()
    for name, description in before.items():
        if name in POINT_TOOLS:
            assert description.endswith(frame_space) and live[name] == description.removesuffix(frame_space) + norm
        else:
            assert live[name] == description
    assert on_card == live
    assert click.structuredContent["summary"] == f"Clicked left at (54.6875, 50) (norm 500) in {frame['frame_id']}"
    assert where["screen"] == {"x": 140, "y": 80} and reader.saved(image) == 1
    assert restored.json() == {"default_space": "frame", "default_norm_scale": 1000}
    assert after == before


@pytest.mark.parametrize(("body", "status", "code", "message"), [
    ({"default_space": "polar"}, 400, "invalid_argument", "space is 'frame' or 'norm', got 'polar'"),
    ({"default_space": "norm", "default_norm_scale": 0}, 400, "invalid_argument",
     "norm_scale is an integer from 1 to 1000000, got 0"),
    ({}, 400, "invalid_params", "missing a required argument: 'default_space'"),
    ({"default_space": "norm", "scale": 3}, 400, "invalid_params", "got an unexpected keyword argument 'scale'"),
])
def test_computer_spaces_set_refuses_bad_values_and_keeps_the_default(desk, body, status, code, message):
    refused = desk.extension("computer-spaces", "set", body)
    assert refused.status_code == status
    assert refused.json() == {"ok": False, "error": {"code": code, "message": message, "retryable": False,
                                                     "applied": "no"}}
    assert desk.extension("computer-spaces", "get").json() == {"default_space": "frame", "default_norm_scale": 1000}


async def test_computer_keyboard_set_echoes_its_settings_validates_and_caps_hold_ms(desk):
    current = desk.extension("computer-keyboard", "get").json()
    assert list(current.items()) == [("tap_hold_ms", 50), ("type_delay_ms", 10), ("layout", "us"),
                                     ("max_hold_ms", 10000)]
    same = {k: v for k, v in current.items() if k != "layout"}
    assert desk.extension("computer-keyboard", "set", same).json() == current
    refusals = [
        ({"tap_hold_ms": 2000}, 400, "invalid_argument", "tap_hold_ms is from 0 to 1000, got 2000"),
        ({"layout": "de"}, 501, "unsupported", "this computer types in the layouts ['us'], not 'de'"),
        ({"tap_hold_ms": 20, "layout": "de"}, 501, "unsupported",
         "this computer types in the layouts ['us'], not 'de'"),
        ({"repeat_ms": 5}, 400, "invalid_params", "got an unexpected keyword argument 'repeat_ms'"),
    ]
    for body, status, code, message in refusals:
        refused = desk.extension("computer-keyboard", "set", body)
        assert refused.status_code == status, body
        assert refused.json() == {"ok": False, "error": {"code": code, "message": message, "retryable": False,
                                                         "applied": "no"}}
    assert desk.extension("computer-keyboard", "get").json() == current
    changed = desk.extension("computer-keyboard", "set", {"max_hold_ms": 100, "type_delay_ms": 0})
    assert changed.json() == {**current, "max_hold_ms": 100, "type_delay_ms": 0}
    assert desk.extension("computer-keyboard", "get").json() == changed.json()
    async with session(desk) as agent:
        error = await agent.refused("computer_keyboard_down", keys=["Shift"], hold_ms=200)
        await agent.call("computer_keyboard_down", keys=["Shift"], hold_ms=100)
    assert error["message"] == "hold_ms is from 0 to 100, got 200"


async def test_a_tool_disabled_for_a_role_is_hidden_and_refused_only_to_that_role(desk, reader):
    role = "contract-tester"
    disabled = desk.extension("disable-tool", "disable", {"role": role, "tools": ["computer_click"]})
    assert disabled.status_code == 200
    assert disabled.json() == {"role": role, "disabled": ["computer_click"], "allowed": []}
    async with session(desk, role=role) as limited, session(desk) as anyone:
        await limited.shot()
        await anyone.shot()
        hidden = {t.name for t in (await limited.client.list_tools()).tools}
        shown = {t.name for t in (await anyone.client.list_tools()).tools}
        error = await limited.refused("computer_click", x=SAVE_AT[0], y=SAVE_AT[1])
        _, untouched = await limited.shot()
        await anyone.call("computer_click", x=SAVE_AT[0], y=SAVE_AT[1])
        enabled = desk.extension("enable-tool", "enable", {"role": role, "tools": ["computer_click"]})
        await limited.call("computer_click", x=SAVE_AT[0], y=SAVE_AT[1])
        relisted = {t.name for t in (await limited.client.list_tools()).tools}
        _, after = await anyone.shot()
    assert hidden == ALL_TOOLS - {"computer_click"} and shown == ALL_TOOLS
    assert error == {"code": "permission_denied", "message": f"Tool 'computer_click' is disabled for role '{role}'",
                     "retryable": False, "applied": "no"}
    assert reader.saved(untouched) == 0
    assert enabled.json() == {"role": role, "disabled": [], "allowed": ["computer_click"]}
    assert relisted == ALL_TOOLS
    assert reader.saved(after) == 2


# ------------------------------------------------------------------------------------- computer-exec

def test_exec_runs_argv_directly_without_a_shell_in_the_home_with_its_env(desk):
    literal = desk.exec(["echo", "$HOME; echo injected", "*"], "no-shell")
    assert literal.status_code == 200
    assert literal.json() == {"exit_code": 0, "stdout": "$HOME; echo injected *\n", "stderr": "",
                              "truncated": False, "timed_out": False}
    coded = desk.exec(["sh", "-c", "echo hi; echo err >&2; exit 3"], "exit-code").json()
    assert coded == {"exit_code": 3, "stdout": "hi\n", "stderr": "err\n", "truncated": False, "timed_out": False}
    where = desk.exec(["sh", "-c", 'pwd -P; echo "$HOME:$GREETING"'], "cwd-env", env={"GREETING": "hello"}).json()
    home = desk.home.resolve()
    assert where["stdout"] == f"{home}\n{desk.home}:hello\n"
    (desk.home / "sub").mkdir()
    assert desk.exec(["pwd", "-P"], "cwd-relative", cwd="sub").json()["stdout"] == f"{home / 'sub'}\n"


async def test_exec_timeout_kills_the_whole_process_group(desk):
    """`sh` starts a background `sleep` that would outlive it, then waits; past the timeout the
    whole group is killed, the background child with it."""
    pid_file = desk.home / "child.pid"
    _, url = desk.endpoint("computer-exec", "run")
    async with httpx.AsyncClient(timeout=60) as client:
        running = asyncio.create_task(client.post(
            url, json={"argv": ["sh", "-c", "sleep 300 & echo $! > child.pid; echo started; sleep 300"],
                  "request_id": "group-kill", "timeout_s": 2}))
        started = time.monotonic()
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert time.monotonic() - started < 2, "the command did not start"
            await asyncio.sleep(0.02)
        child = int(pid_file.read_text())
        assert process_state(child) == "S"
        answer = await running
        took = time.monotonic() - started
    assert answer.status_code == 200
    assert answer.json() == {"exit_code": None, "stdout": "started\n", "stderr": "", "truncated": False,
                             "timed_out": True}
    assert took < 10
    deadline = time.monotonic() + 5
    while process_state(child) not in (None, "Z"):
        assert time.monotonic() < deadline, f"the background child {child} outlived the timeout"
        await asyncio.sleep(0.05)


def process_state(pid: int) -> str | None:
    """The state letter of process `pid` (`S` sleeping, `Z` dead but not reaped), None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def test_exec_answers_once_its_program_exits_though_a_background_child_holds_stdout(desk):
    started = time.monotonic()
    answer = desk.exec(["sh", "-c", "echo before; sleep 30 & echo $! > holder.pid"], "holder", timeout_s=20)
    took = time.monotonic() - started
    holder = int((desk.home / "holder.pid").read_text())
    try:
        assert answer.status_code == 200
        assert answer.json() == {"exit_code": 0, "stdout": "before\n", "stderr": "", "truncated": False,
                                 "timed_out": False}
        assert took < 5
    finally:
        os.kill(holder, 9)


def test_exec_cuts_each_stream_at_max_output_bytes(desk):
    cap = SETTINGS["exec_output_bytes"]
    exact = desk.exec(["sh", "-c", f"head -c {cap} /dev/zero | tr '\\0' a"], "exact").json()
    assert exact["stdout"] == "a" * cap and exact["truncated"] is False
    over = desk.exec(["sh", "-c", f"head -c {cap * 5} /dev/zero | tr '\\0' b; echo short >&2"], "over").json()
    assert over["stdout"] == "b" * cap and over["stderr"] == "short\n" and over["truncated"] is True
    err = desk.exec(["sh", "-c", f"echo short; head -c {cap + 1} /dev/zero | tr '\\0' c >&2"], "err").json()
    assert err["stdout"] == "short\n" and err["stderr"] == "c" * cap and err["truncated"] is True
    mid_character = desk.exec(["sh", "-c", "printf a; i=0; while [ $i -lt 600 ]; do printf 'é'; i=$((i+1)); done"],
                              "bytes").json()
    assert mid_character["stdout"] == "a" + "é" * 499 + "\ufffd" and mid_character["truncated"] is True


def test_exec_a_repeated_request_id_answers_the_first_result_without_running_again(desk):
    argv = ["sh", "-c", "echo run >> runs.log; date +%s%N"]
    first = desk.exec(argv, "once")
    again = desk.exec(argv, "once")
    other_argv = desk.exec(["sh", "-c", "echo other >> runs.log; exit 9"], "once")
    fresh = desk.exec(argv, "twice")
    assert first.status_code == again.status_code == other_argv.status_code == 200
    assert again.json() == first.json() and other_argv.json() == first.json()
    assert fresh.json()["stdout"] != first.json()["stdout"]
    assert (desk.home / "runs.log").read_text() == "run\nrun\n"


async def test_exec_a_duplicate_request_id_in_flight_joins_the_running_command(desk):
    body = {"argv": ["sh", "-c", "echo run >> joined.log; sleep 1; date +%s%N"], "request_id": "joined"}
    _, url = desk.endpoint("computer-exec", "run")
    async with httpx.AsyncClient(timeout=60) as client:
        first = asyncio.create_task(client.post(url, json=body))
        await asyncio.sleep(0.3)
        assert not first.done()
        duplicate = await client.post(url, json={**body, "argv": ["sh", "-c", "echo other >> joined.log"]})
        original = await first
    assert original.status_code == duplicate.status_code == 200
    assert duplicate.json() == original.json() and original.json()["exit_code"] == 0
    assert (desk.home / "joined.log").read_text() == "run\n"


@pytest.mark.parametrize(("body", "status", "code", "message"), [
    ({"argv": ["agentenv-no-such-program"], "request_id": "missing"}, 400, "invalid_argument",
     "cannot run 'agentenv-no-such-program': No such file or directory"),
    ({"argv": ["pwd"], "request_id": "no-cwd", "cwd": "not-there"}, 400, "invalid_argument",
     "cannot run 'pwd': No such file or directory"),
    ({"argv": [], "request_id": "empty"}, 400, "invalid_argument",
     "argv is a non-empty list of strings, run directly: name a shell to use one: ['bash', '-lc', '...']"),
    ({"argv": ["true"], "request_id": "slow", "timeout_s": 3601}, 400, "invalid_argument",
     "timeout_s is above 0 and at most 3600, got 3601"),
    ({"argv": ["true"], "request_id": "shell", "shell": True}, 400, "invalid_params",
     "got an unexpected keyword argument 'shell'"),
])
def test_exec_refuses_with_a_coded_http_error_and_forgets_the_request_id(desk, body, status, code, message):
    refused = desk.extension("computer-exec", "run", body)
    assert refused.status_code == status
    assert refused.json() == {"ok": False, "error": {"code": code, "message": message, "retryable": False,
                                                     "applied": "no"}}
    retried = desk.exec(["echo", "ran"], body["request_id"])
    assert retried.status_code == 200 and retried.json()["stdout"] == "ran\n"


# ------------------------------------------------------------------------------------- data plane

def file_part(path: str, content: bytes) -> dict:
    return {"kind": "file", "file": {"bytes": base64.b64encode(content).decode()}, "metadata": {MARKER: {"path": path}}}


def test_data_add_writes_files_atomically_under_the_home(desk):
    (desk.home / "notes.txt").write_text("old notes")
    (desk.home / "kept.txt").write_text("untouched")
    os.link(desk.home / "notes.txt", desk.home / "notes-link.txt")
    reply = rpc(desk.server, "data/add", {"parts": [
        file_part("notes.txt", b"new notes"), file_part("out/deep/r.json", b'{"a": 1}\n')]})
    assert reply == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert (desk.home / "notes.txt").read_bytes() == b"new notes"
    assert (desk.home / "out" / "deep" / "r.json").read_bytes() == b'{"a": 1}\n'
    # A file replaced by a rename leaves other links to the old one as they were; one written in
    # place would change them too.
    assert (desk.home / "notes-link.txt").read_text() == "old notes"
    assert (desk.home / "kept.txt").read_text() == "untouched"
    leftovers = [p.name for p in desk.home.rglob("*") if p.name.endswith(".part")]
    assert leftovers == []


@pytest.mark.parametrize(("part", "message"), [
    (file_part("../escape.txt", b"x"), "the part's path '../escape.txt' is not a normalized path relative to the home"),
    (file_part("/tmp/escape.txt", b"x"),
     "the part's path '/tmp/escape.txt' is not a normalized path relative to the home"),
    (file_part("a//escape.txt", b"x"), "the part's path 'a//escape.txt' is not a normalized path relative to the home"),
    (file_part("link/escape.txt", b"x"), "the part's path 'link/escape.txt' resolves outside the home"),
    ({"kind": "text", "text": "x"},
     "data/add on a computer takes file parts naming their path under urn:agentenv:data-objects/v1, got a text part"),
    ({"kind": "file", "file": {"bytes": "not base64!"}, "metadata": {MARKER: {"path": "x.txt"}}},
     "the part's bytes are not base64"),
])
def test_data_add_refuses_a_path_outside_the_home_or_a_bad_part_and_writes_nothing(desk, tmp_path, part, message):
    outside = tmp_path / "outside"
    outside.mkdir()
    (desk.home / "link").symlink_to(outside)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    reply = rpc(desk.server, "data/add", {"parts": [part]})
    assert reply["error"] == {"code": -32000, "message": message, "data": {"code": "add_failed"}}
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


FRESH_WIDGETS = {"saved": 0, "subscribed": False, "name": "", "scroll_top": 0, "selected": None, "strokes": []}


def test_data_get_returns_the_files_under_its_data_paths(desk):
    assert rpc(desk.server, "data/get", {})["result"] == {"parts": [{"kind": "data", "data": FRESH_WIDGETS}]}
    (desk.home / "out" / "sub").mkdir(parents=True)
    (desk.home / "out" / "sub" / "r.json").write_text('{"a":1}\n')
    (desk.home / "out" / "a.bin").write_bytes(b"\x00\x01")
    (desk.home / "notes.txt").write_text("notes")
    (desk.home / "elsewhere.txt").write_text("not exported")
    parts = rpc(desk.server, "data/get", {})["result"]["parts"]
    assert parts == [{"kind": "data", "data": FRESH_WIDGETS}] + [
        {"kind": "file", "file": {"bytes": base64.b64encode(content).decode(), "mimeType": mime, "name": name},
         "metadata": {MARKER: {"path": path}}}
        for path, name, mime, content in [
            ("notes.txt", "notes.txt", "text/plain", b"notes"),
            ("out/a.bin", "a.bin", "application/octet-stream", b"\x00\x01"),
            ("out/sub/r.json", "r.json", "application/json", b'{"a":1}\n'),
        ]]


async def test_a_data_part_seeds_the_desks_widgets_and_data_get_exports_them(desk, reader):
    seed = {"saved": 7, "subscribed": True, "name": "suite", "scroll_top": 5, "selected": 6,
            "strokes": [[[410, 210], [500, 260]]]}
    assert rpc(desk.server, "data/add", {"parts": [{"kind": "data", "data": seed}]})["result"] == {}
    assert rpc(desk.server, "data/get", {})["result"]["parts"] == [{"kind": "data", "data": seed}]
    async with session(desk) as agent:
        _, seeded = await agent.shot()
        await focus_name(agent)
        await agent.call("computer_type", text="!")
    assert reader.name(seeded) == "suite"
    assert rpc(desk.server, "data/get", {})["result"]["parts"][0]["data"]["name"] == "suite!"
    for bad, message in [
        ({"selected": 100}, "invalid_argument: selected is a row from 0 to 99, got 100"),
        ({"strokes": [[[0, 0], [1, 1]]]}, "invalid_argument: every stroke's points are on the pad"),
    ]:
        reply = rpc(desk.server, "data/add", {"parts": [{"kind": "data", "data": bad}]})
        assert reply["error"] == {"code": -32000, "message": message, "data": {"code": "add_failed"}}
    assert rpc(desk.server, "data/get", {})["result"]["parts"][0]["data"]["name"] == "suite!"


def test_the_data_plane_answers_json_rpc_errors_for_bad_requests(desk):
    assert rpc(desk.server, "data/reset", {})["error"]["code"] == -32601
    parse_error = rpc_post(desk.server, b"{not json")
    assert parse_error.status_code == 200 and parse_error.json()["error"]["code"] == -32700


async def test_keys_held_without_hold_ms_are_released_after_max_hold_ms(desk, reader):
    assert desk.extension("computer-keyboard", "set", {"max_hold_ms": 300}).status_code == 200
    async with session(desk) as agent:
        await focus_name(agent)
        await agent.call("computer_keyboard_down", keys=["Shift"])
        await agent.call("computer_type", text="i")
        await asyncio.sleep(0.8)
        await agent.call("computer_type", text="s")
        nothing_held = await agent.refused("computer_keyboard_up")
        _, after = await agent.shot()
    assert reader.name(after) == "Is"
    assert nothing_held["message"] == "you are holding no keys"
