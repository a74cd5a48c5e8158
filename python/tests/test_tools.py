"""envhost.tools' definitions, accepted unchanged by the official `openai` client: a Chat
Completions server on loopback validates each request with the openai package's own types."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pydantic
from openai.types.chat import ChatCompletionToolParam, completion_create_params

import envhost.tools
from conftest import GENERAL

CREATE = pydantic.TypeAdapter(completion_create_params.CompletionCreateParamsNonStreaming)
TOOL = pydantic.TypeAdapter(ChatCompletionToolParam)


class ChatCompletions(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: the body validated with openai's types, then one canned answer."""

    seen: list[dict] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        CREATE.validate_python(body)
        for tool in body["tools"]:
            TOOL.validate_python(tool, strict=True)
        ChatCompletions.seen.append(body)
        answer = {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "done"}}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_openai_accepts_the_tools_unchanged(host):
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatCompletions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with host.episode("slack", GENERAL) as episode:
            listed = episode.list_tools()
            tools = envhost.tools.openai(listed)
            client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="none")
            answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                    tools=tools)
        assert answer.choices[0].message.content == "done"
        sent = ChatCompletions.seen[-1]["tools"]
        assert [t["function"]["name"] for t in sent] == [t["name"] for t in listed]
        assert sent[0]["function"]["parameters"] == listed[0]["inputSchema"]
    finally:
        server.shutdown()


def test_anthropic_definitions_name_the_input_schema(host):
    with host.episode("slack") as episode:
        listed = episode.list_tools()
    defined = envhost.tools.anthropic(listed)
    assert [d["name"] for d in defined] == [t["name"] for t in listed]
    assert all(d["input_schema"] == t["inputSchema"] for d, t in zip(defined, listed))
