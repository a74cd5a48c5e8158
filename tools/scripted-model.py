#!/usr/bin/env python3
"""A scripted OpenAI-compatible Chat Completions server, for trying agents without a GPU.

    python3 tools/scripted-model.py [--port 8000] [--host 127.0.0.1]

then `envhost serve ... --agent NAME=PATH.wasm --model-url http://127.0.0.1:8000/v1` (the README's
"An agent: the rollout loop"). Python's standard library only.

Routes:

- `POST /v1/chat/completions` (also `/chat/completions`): with `"stream": true`, Server-Sent
  Events, `data: {chunk}\\n\\n` ... `data: [DONE]\\n\\n`, each chunk
  `{"id", "object": "chat.completion.chunk", "created", "model", "choices": [{"index": 0,
  "delta": {...}, "finish_reason": null | "stop" | "tool_calls"}]}` (and a last `usage` chunk
  with no choices when `stream_options.include_usage` is set); otherwise one
  `chat.completion` object.
- `GET /v1/models` (also `/models`): one model, `scripted`. Any model name is accepted and
  echoed back.

What it answers, deterministically, from the request alone:

- If the request offers a tool whose name ends in `_send_message` (slack's `slack_send_message`,
  arguments `{"channel", "text"}`) and no `tool` message follows the last `user` message, it
  streams a `reasoning_content` delta, then one tool call posting the user's text to channel
  `general`; `finish_reason` is `tool_calls`.
- If a `tool` message follows the last `user` message, it answers in text what the tool
  answered: `Posted to #general.` when that was slack's `ok`, else `The tool answered: ...`.
- Otherwise (no such tool offered) it answers `You said: <the user's text>`.

The tool call's id is `call_N`, N counting the tool calls already in the conversation. No key is
needed; an `Authorization` header is ignored. Each request is logged on stderr in one line.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "scripted"
CHANNEL = "general"


def message_text(content) -> str:
    """A message's text: its `content` string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def tool_answer(content) -> str:
    """What a `tool` message says: its text, or, when that is a JSON list of MCP content blocks
    (as envhost's agents pass them on), their texts joined."""
    text = message_text(content).strip()
    try:
        blocks = json.loads(text)
    except ValueError:
        return text
    if isinstance(blocks, str):
        return blocks
    if isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks):
        return "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
    return text


def send_tool(request: dict) -> str | None:
    """The name of the first offered tool ending in `_send_message`, if any."""
    for tool in request.get("tools") or []:
        name = (tool.get("function") or {}).get("name", "") if isinstance(tool, dict) else ""
        if name.endswith("_send_message"):
            return name
    return None


def plan(request: dict) -> dict:
    """What to answer: {"reasoning"?, "tool_call"?: {"id", "name", "arguments"}, "text"?, "finish"}."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    user_text = message_text(messages[last_user].get("content")) if last_user >= 0 else ""
    answered = [m for m in messages[last_user + 1:] if m.get("role") == "tool"]
    tool = send_tool(request)
    if tool and not answered:
        calls_so_far = sum(len(m.get("tool_calls") or []) for m in messages)
        arguments = json.dumps({"channel": CHANNEL, "text": user_text})
        return {
            "reasoning": f"The user wants this posted. {tool} posts to a channel; I'll send it to #{CHANNEL}.",
            "tool_call": {"id": f"call_{calls_so_far + 1}", "name": tool, "arguments": arguments},
            "finish": "tool_calls",
        }
    if answered:
        said = tool_answer(answered[-1].get("content"))
        return {"text": f"Posted to #{CHANNEL}." if said == "ok" else f"The tool answered: {said}", "finish": "stop"}
    return {"text": f"You said: {user_text}", "finish": "stop"}


class Handler(BaseHTTPRequestHandler):
    server_version = "scripted-model/1"

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self.reply(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "envhost"}]})
        else:
            self.reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self.reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            length = int(self.headers.get("content-length") or 0)
            request = json.loads(self.rfile.read(length) or b"null")
            if not isinstance(request, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as why:
            self.reply(400, {"error": {"message": f"invalid request: {why}", "type": "invalid_request_error"}})
            return
        answer = plan(request)
        model = request.get("model") or MODEL
        if request.get("stream"):
            include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
            self.stream(answer, model, include_usage)
        else:
            self.reply(200, completion(answer, model))
        call = answer.get("tool_call")
        what = f"tool call {call['name']} {call['arguments']}" if call else f"text {answer['text']!r}"
        self.log_message("%s -> %s", "stream" if request.get("stream") else "json", what)

    def stream(self, answer: dict, model: str, include_usage: bool) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        ident, created = f"chatcmpl-{time.time_ns():x}", int(time.time())

        def send(delta: dict | None, finish: str | None = None, usage: dict | None = None) -> None:
            chunk = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                     "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage is not None:
                chunk["usage"] = usage
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        send({"role": "assistant", "content": ""})
        if answer.get("reasoning"):
            send({"reasoning_content": answer["reasoning"]})
        if call := answer.get("tool_call"):
            send({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                  "function": {"name": call["name"], "arguments": ""}}]})
            send({"tool_calls": [{"index": 0, "function": {"arguments": call["arguments"]}}]})
        if answer.get("text"):
            send({"content": answer["text"]})
        send({}, answer["finish"])
        if include_usage:
            send(None, usage=usage_of(answer))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def reply(self, status: int, body: dict) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_request(self, code="-", size="-") -> None:
        if code != 200:
            super().log_request(code, size)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the stdlib's name)
        sys.stderr.write(f"scripted-model: {format % args}\n")


def completion(answer: dict, model: str) -> dict:
    """The non-streamed `chat.completion` object of an answer."""
    message: dict = {"role": "assistant", "content": answer.get("text")}
    if answer.get("reasoning"):
        message["reasoning_content"] = answer["reasoning"]
    if call := answer.get("tool_call"):
        message["tool_calls"] = [{"id": call["id"], "type": "function",
                                  "function": {"name": call["name"], "arguments": call["arguments"]}}]
    return {"id": f"chatcmpl-{time.time_ns():x}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message, "finish_reason": answer["finish"]}],
            "usage": usage_of(answer)}


def usage_of(answer: dict) -> dict:
    """Token counts, roughly (words), so that clients reading `usage` find one."""
    call = answer.get("tool_call") or {}
    completion_tokens = len(f"{answer.get('reasoning', '')} {answer.get('text', '')} {call.get('arguments', '')}".split())
    return {"prompt_tokens": 0, "completion_tokens": completion_tokens, "total_tokens": completion_tokens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"scripted-model: serving http://{host}:{port}/v1 (POST /v1/chat/completions, GET /v1/models)",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
