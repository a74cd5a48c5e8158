"""MCP beyond tool calls, driven by the official `mcp` client against `guests/everything`
(docs/protocol.md#resources-and-prompts, #progress, #logging, #client-requests): resources,
templates, prompts and completions answered by the environment; progress and log notifications
on the call's stream; sampling and elicitation asked of the client and journaled, so that a fork
replays the answer instead of asking again; verbatim content blocks; and `--allowed-hosts`."""
from __future__ import annotations

import base64

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.context import RequestContext

from conftest import GUEST_RELEASE, MCP_ACCEPT, run

EVERYTHING_WASM = GUEST_RELEASE / "everything.wasm"


@pytest.fixture(scope="module")
def everything(pool):
    return pool.envhost(EVERYTHING_WASM, label="everything")


class Client:
    """What the client was asked and told: the requests it answered and the records it got."""

    def __init__(self) -> None:
        self.sampled: list[types.CreateMessageRequestParams] = []
        self.elicited: list[types.ElicitRequestParams] = []
        self.records: list[types.LoggingMessageNotificationParams] = []

    async def sample(self, _context: RequestContext, params: types.CreateMessageRequestParams):
        self.sampled.append(params)
        return types.CreateMessageResult(role="assistant", model="scripted",
                                         content=types.TextContent(type="text", text="Paris"))

    async def elicit(self, _context: RequestContext, params: types.ElicitRequestParams):
        self.elicited.append(params)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.records.append(params)


async def _session(url: str, client: Client, action):
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write, sampling_callback=client.sample,
                                 elicitation_callback=client.elicit, logging_callback=client.log) as session:
            await session.initialize()
            return await action(session)


def test_resources_templates_prompts_and_completions_come_from_the_environment(everything):
    async def use(session: ClientSession):
        resources = await session.list_resources()
        templates = await session.list_resource_templates()
        text = await session.read_resource("test://static-text")
        binary = await session.read_resource("test://static-binary")
        templated = await session.read_resource("test://template/42/data")
        prompts = await session.list_prompts()
        prompt = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        completed = await session.complete(types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                                           {"name": "arg1", "value": "par"})
        with pytest.raises(Exception, match="not found"):
            await session.read_resource("test://nothing")
        return resources, templates, text, binary, templated, prompts, prompt, completed

    resources, templates, text, binary, templated, prompts, prompt, completed = run(
        _session(everything.mcp_url, Client(), use))
    assert [str(r.uri) for r in resources.resources] == [
        "test://static-text", "test://static-binary", "test://watched-resource"]
    assert [t.uriTemplate for t in templates.resourceTemplates] == ["test://template/{id}/data"]
    assert text.contents[0].text == "This is the content of the static text resource."
    assert base64.b64decode(binary.contents[0].blob).startswith(b"\x89PNG")
    assert '"id":"42"' in templated.contents[0].text
    assert "test_prompt_with_image" in [p.name for p in prompts.prompts]
    assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"
    assert completed.completion.values == ["paris", "park", "party"]


def test_an_unknown_prompt_is_invalid_params(everything):
    async def use(session: ClientSession):
        with pytest.raises(Exception) as refused:
            await session.get_prompt("nope")
        return refused.value
    refused = run(_session(everything.mcp_url, Client(), use))
    assert refused.error.code == -32602 and "Unknown prompt: nope" in refused.error.message


def test_progress_and_log_records_arrive_while_the_tool_runs(everything):
    client, progress = Client(), []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async def use(session: ClientSession):
        await session.set_logging_level("info")
        logged = await session.call_tool("test_tool_with_logging", {})
        reported = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        return logged, reported

    logged, reported = run(_session(everything.mcp_url, client, use))
    assert not logged.isError and not reported.isError
    assert [r.data for r in client.records] == [
        "Tool execution started", "Tool processing data", "Tool execution completed"]
    assert {(r.level, r.logger) for r in client.records} == {("info", "everything")}
    assert progress == [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)]


def test_a_session_that_set_a_higher_level_gets_no_info_records(everything):
    client = Client()

    async def use(session: ClientSession):
        await session.set_logging_level("error")
        return await session.call_tool("test_tool_with_logging", {})

    assert not run(_session(everything.mcp_url, client, use)).isError
    assert client.records == []


def test_verbatim_blocks_pass_through(everything):
    async def use(session: ClientSession):
        return (await session.call_tool("test_audio_content", {}),
                await session.call_tool("test_multiple_content_types", {}),
                await session.call_tool("test_error_handling", {}))

    audio, mixed, failed = run(_session(everything.mcp_url, Client(), use))
    assert audio.content[0].type == "audio" and audio.content[0].mimeType == "audio/wav"
    assert base64.b64decode(audio.content[0].data).startswith(b"RIFF")
    assert [b.type for b in mixed.content] == ["text", "image", "resource"]
    assert mixed.content[2].resource.text == '{"test":"data","value":123}'
    assert failed.isError and failed.content[0].text.startswith("This tool intentionally")


def test_sampling_and_elicitation_ask_the_client_and_a_fork_replays_the_answers(everything):
    created = httpx.post(everything.url("/episodes"), json={}).json()
    episode_mcp = everything.url(created["url"] + "mcp")
    client = Client()

    async def use(session: ClientSession):
        return (await session.call_tool("test_sampling", {"prompt": "Capital of France?"}),
                await session.call_tool("test_elicitation", {"message": "Who are you?"}))

    sampled, elicited = run(_session(episode_mcp, client, use))
    assert sampled.content[0].text == "LLM response: Paris"
    assert client.sampled[0].messages[0].content.text == "Capital of France?"
    assert client.sampled[0].maxTokens == 100
    assert elicited.content[0].text.startswith("User response: ")
    assert '"username":"ada"' in elicited.content[0].text
    assert client.elicited[0].message == "Who are you?"

    forked = httpx.post(everything.url(created["url"] + "fork"))
    assert forked.status_code == 201, forked.text
    assert (len(client.sampled), len(client.elicited)) == (1, 1), "a replay never asks again"
    again = run(_session(everything.url(forked.json()["url"] + "mcp"), Client(),
                         lambda s: s.call_tool("test_simple_text", {})))
    assert not again.isError


def test_a_client_without_the_capability_is_not_asked(everything):
    async def use():
        async with streamablehttp_client(everything.mcp_url) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("test_sampling", {"prompt": "hi"})
    refused = run(use())
    assert refused.isError
    assert "did not declare the sampling capability" in refused.content[0].text


def test_allowed_hosts_refuse_a_rebinding_host_and_origin(pool):
    guarded = pool.envhost(EVERYTHING_WASM, "--allowed-hosts", "localhost,127.0.0.1,[::1]", label="allowed-hosts")
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}

    def post(host: str | None, origin: str | None) -> int:
        headers = {"Accept": MCP_ACCEPT, **({"Host": host} if host else {}), **({"Origin": origin} if origin else {})}
        return httpx.post(guarded.mcp_url, json=body, headers=headers).status_code

    port = guarded.base_url.rsplit(":", 1)[1]
    assert post(None, None) == 200
    assert post(f"localhost:{port}", f"http://localhost:{port}") == 200
    assert post("evil.example.com", None) == 421
    assert post(f"127.0.0.1:{port}", "http://evil.example.com") == 403


def test_a_tool_description_changed_by_the_environment_shows_in_its_episodes_card_and_list(everything):
    """docs/protocol.md#tool-updates: `update_tool` changes one episode's card and tools/list
    together; other episodes keep the declared description; a fork and a snapshot restore replay
    the change."""
    def described(url: str) -> tuple[str, str]:
        card = httpx.get(url + ".well-known/agent-env.json", timeout=10).json()
        on_card = next(t["description"] for t in card["capabilities"]["tools"] if t["name"] == "describe_me")

        async def listed(session: ClientSession):
            return next(t.description for t in (await session.list_tools()).tools if t.name == "describe_me")

        return on_card, run(_session(url + "mcp", Client(), listed))

    declared = "Changes this tool's own description for the episode, as the reference's `update_tool`."
    changed = everything.url(httpx.post(everything.url("/episodes"), json={}).json()["url"])
    other = everything.url(httpx.post(everything.url("/episodes"), json={}).json()["url"])
    result = run(_session(changed + "mcp", Client(),
                          lambda s: s.call_tool("describe_me", {"description": "Now described anew."})))
    assert not result.isError, result
    assert described(changed) == ("Now described anew.", "Now described anew.")
    assert described(other) == (declared, declared)
    forked = httpx.post(changed + "fork", timeout=30)
    assert forked.status_code == 201, forked.text
    assert described(everything.url(forked.json()["url"])) == ("Now described anew.", "Now described anew.")
    snapshot = httpx.post(changed + "snapshot", timeout=30).json()["snapshot"]
    restored = httpx.post(everything.url(f"/snapshots/{snapshot}/episodes"), timeout=60)
    assert restored.status_code == 201, restored.text
    assert described(everything.url(restored.json()["url"])) == ("Now described anew.", "Now described anew.")
