"""Refusals that say what to do (docs/serve.md#start-up-refusals), each asserted by running the
binary or sending the request: a component of another world names the option that serves it, a
file that is no component says so, a busy port names --port and MCP_PORT, each cause is printed
once, --exec as root warns, a first start says it is compiling, `envhost new` says a first serve
compiles, environment_not_found names the environments served, and a guest's exception or panic
keeps its type and message."""
from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from conftest import (DESK_WASM, FAULTY_WASM, GUEST_RELEASE, SLACK_WASM, X11_DRIVER_WASM, McpSession, free_port,
                      rpc)

AGENT_WASM = GUEST_RELEASE / "tool_agent.wasm"
FAULTY_PY_WASM = GUEST_RELEASE / "faulty-py.wasm"


def run(envhost_bin: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`envhost ARGS`, which must exit by itself: its exit code and output."""
    return subprocess.run([str(envhost_bin), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "RUST_LOG": "info", **(env or {})})


def the_error(done: subprocess.CompletedProcess) -> str:
    """The one `error:` line of a failed run (exit status 1), checked to be the only one."""
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "Caused by" not in done.stderr and "stack backtrace" not in done.stderr, done.stderr
    return errors[0]


@pytest.mark.parametrize("args, says", [
    ([str(DESK_WASM)], f"a computer driver component, not an environment: serve it with `envhost serve --driver {DESK_WASM}`"),
    ([str(AGENT_WASM)], f"an agent component, not an environment: serve it beside an environment with "
                        f"`envhost serve ENV.wasm --agent NAME={AGENT_WASM}`"),
    (["--driver", str(SLACK_WASM)], f"an environment component, not a computer driver: serve it as an environment, "
                                    f"not with --driver: `envhost serve {SLACK_WASM}`"),
    (["--driver", str(AGENT_WASM)], "an agent component, not a computer driver: serve it beside an environment"),
    ([str(SLACK_WASM), "--agent", f"a={FAULTY_WASM}"], f"an environment component, not an agent: serve it as an "
                                                       f"environment, not with --agent: `envhost serve {FAULTY_WASM}`"),
], ids=["driver-as-environment", "agent-as-environment", "environment-as-driver", "agent-as-driver",
        "environment-as-agent"])
def test_a_component_of_another_world_names_the_option_that_serves_it(envhost_bin, guests, args, says):
    error = the_error(run(envhost_bin, "serve", *args, "--port", str(free_port())))
    assert says in error, error
    assert "import" not in error and "linker" not in error and "resource" not in error, error
    assert error.count("component") == 1, error


def test_a_file_that_is_no_component_says_so_in_one_line(envhost_bin, tmp_path):
    text = tmp_path / "notes.wasm"
    text.write_text("hello")
    module = tmp_path / "module.wasm"
    module.write_bytes(b"\0asm\x01\0\0\0")
    for path, says in [(text, "not WebAssembly: the file does not start with the bytes \\0asm"),
                       (module, "a WebAssembly module, not a component: build it for wasm32-wasip2")]:
        error = the_error(run(envhost_bin, "serve", str(path), "--port", str(free_port())))
        assert error == f"error: environment {path.stem} ({path}): {says}" or says in error, error


def test_a_busy_port_names_port_and_mcp_port(envhost_bin, guests):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        error = the_error(run(envhost_bin, "serve", str(SLACK_WASM), "--port", str(port)))
    assert error == (f"error: port {port} of 127.0.0.1 is taken by another program: serve on another with --port N "
                     "(or MCP_PORT=N)"), error


@pytest.mark.parametrize("grant", [["--exec"], ["--display", ":99"], ["--home", "/tmp"]],
                         ids=["exec", "display", "home"])
def test_a_drivers_grant_without_a_driver_is_refused(envhost_bin, guests, grant):
    error = the_error(run(envhost_bin, "serve", str(SLACK_WASM), *grant, "--port", str(free_port())))
    assert error == (f"error: {grant[0]} grants a computer driver what it needs, and no driver is served: give it "
                     "with --driver PATH.wasm (or in the configuration file's [driver] table), or drop it"), error


def test_a_driver_that_needs_a_display_names_the_option(envhost_bin, guests):
    error = the_error(run(envhost_bin, "serve", "--driver", str(X11_DRIVER_WASM), "--port", str(free_port())))
    assert error.endswith("which needs an X display granted to it: serve it with `--display :N`"), error


def test_two_environments_of_one_name_say_how_to_name_them(envhost_bin, guests):
    error = the_error(run(envhost_bin, "serve", str(SLACK_WASM), str(SLACK_WASM), "--port", str(free_port())))
    assert error == ('error: two environments are named "slack": name one otherwise, as NAME=PATH.wasm on the '
                     "command line or with `name` in the configuration file"), error


def test_a_weak_token_says_how_to_make_one(envhost_bin):
    error = the_error(run(envhost_bin, "serve", str(SLACK_WASM), env={"ENVHOST_CONTROL_TOKEN": "short"}))
    assert error == ("error: the operator token of ENVHOST_CONTROL_TOKEN: the operator token has 5 characters; "
                     "give at least 16 (make one with `openssl rand -hex 32`)"), error


def test_exec_as_root_warns_that_commands_run_as_root(pool, guests):
    server = pool.driver(DESK_WASM, label="desk-exec", extra=["--exec"])
    warned = "--exec as root: every command a caller sends through computer-exec runs as root" in server.log_tail()
    assert warned == (os.geteuid() == 0), server.log_tail()


def test_a_first_start_says_it_is_compiling_and_about_how_long(pool, tmp_path):
    server = pool.envhost(FAULTY_PY_WASM, env={"XDG_CACHE_HOME": str(tmp_path / "cold-cache")}, label="cold")
    said = re.search(r"compiling faulty-py \((\d+\.\d) MiB\) with Cranelift: a component's first start takes about "
                     r"(\d+) s on two cores; later starts load it from wasmtime's cache in milliseconds",
                     server.log_tail(20000))
    assert said, server.log_tail()
    assert float(said[1]) > 5 and int(said[2]) >= 1


def test_envhost_new_says_a_first_serve_compiles(envhost_bin, tmp_path):
    done = run(envhost_bin, "new", "--lang", "rust", "hello", "--dir", str(tmp_path / "hello"))
    assert done.returncode == 0, done.stderr
    assert "Its first serve compiles the component, which takes about a second" in done.stdout, done.stdout


def test_environment_not_found_names_the_environments_served(envhost_server):
    refused = httpx.post(envhost_server.url("/episodes"), json={"environment": "nope"})
    assert refused.status_code == 404
    error = refused.json()["error"]
    assert error["code"] == "environment_not_found"
    assert error["message"] == 'no environment named "nope"; this host serves slack'


@pytest.fixture(scope="module")
def faulty_py(pool):
    return pool.envhost(FAULTY_PY_WASM, label="faulty-py")


def test_a_python_guests_exception_keeps_its_type(faulty_py):
    with McpSession(faulty_py) as session:
        raised = session.call("faulty_py_raise", {"key": "x"})
        assert raised["isError"] is True
        assert raised["content"][0]["text"] == "Error executing tool faulty_py_raise: 'x'"
        not_json = session.call("faulty_py_not_json", {})
        assert not_json["isError"] is True
        assert not_json["content"][0]["text"] == (
            "Error executing tool faulty_py_not_json: TypeError: Object of type Opaque is not JSON serializable")
        exited = session.call("faulty_py_exit", {})["content"][0]["text"]
        assert exited == ("guest_trapped: the environment trapped: it exited with status 1, after writing to stderr: "
                          "the faulty Python guest exits on request; the episode was rebuilt to its state before this "
                          "call"), exited
        interrupted = session.call("faulty_py_interrupt", {})["content"][0]["text"]
        assert interrupted.startswith("guest_trapped: "), interrupted
        assert interrupted.endswith("after writing to stderr: KeyboardInterrupt: the faulty Python guest is "
                                    "interrupted on request; the episode was rebuilt to its state before this call"), \
            interrupted
        assert session.call("faulty_py_raise", {"key": "y"})["content"][0]["text"].endswith("'y'")
        wrong = session.call("faulty_py_wrong_output", {})
        assert wrong["isError"] is True and "structuredContent" not in wrong, wrong
        assert wrong["content"] == [{"type": "text", "text": 'Output validation error: "seven" is not of type "integer"'}]
    got = rpc(faulty_py, "data/get", {})
    assert got["error"]["data"]["code"] == "get_failed"
    assert got["error"]["message"] == "not a part: str", got


def test_a_rust_guests_panic_keeps_its_message(pool):
    faulty = pool.envhost(FAULTY_WASM, label="faulty-panic")
    answer = rpc(faulty, "data/add", {"parts": [{"kind": "data", "data": {"fault": "panic"}}]})
    message = answer["error"]["message"]
    assert "after writing to stderr: " in message and "the faulty guest panics on request" in message, message
