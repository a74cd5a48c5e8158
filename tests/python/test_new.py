"""`envhost new`: a scaffolded environment in each language builds with the printed command,
serves with the printed command, and answers its tool to the official MCP client."""
from __future__ import annotations

import re
import subprocess

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from conftest import run

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

BUILD_TIMEOUT_S = 900


async def greet(server, who: str) -> tuple[list[str], str]:
    async with streamablehttp_client(server.mcp_url, headers={"AgentEnv-Role": "tester"}) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool(tools[0], {"who": who})
            assert not result.isError, result
            return tools, result.content[0].text


@pytest.mark.parametrize("lang", ["rust", "python", "js"])
def test_a_new_environment_builds_serves_and_answers(envhost_bin, pool, tmp_path, lang):
    name = f"hello-{lang}"
    made = subprocess.run([str(envhost_bin), "new", "--lang", lang, name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    build, serve = re.findall(r"^    (\S.*)$", made.stdout, re.M)
    assert build == f"{name}/build.sh"
    assert serve == f"{envhost_bin} serve {name}/{name}.wasm --host 127.0.0.1"

    built = subprocess.run(build, shell=True, cwd=tmp_path, capture_output=True, text=True,
                           timeout=BUILD_TIMEOUT_S)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    server = pool.envhost(tmp_path / name / f"{name}.wasm", label=f"envhost-new-{lang}")
    tools, text = run(greet(server, "world"))
    assert tools == [f"{name}_greet"]
    assert text == "Hello, world! (greeting 1 of this episode, asked by tester)"


def test_new_refuses_a_bad_name_and_a_full_directory(envhost_bin, tmp_path):
    bad = subprocess.run([str(envhost_bin), "new", "--lang", "rust", "Hello World"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "is not an environment name" in bad.stderr
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("mine")
    full = subprocess.run([str(envhost_bin), "new", "--lang", "js", "taken"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert full.returncode != 0 and "exists and is not empty" in full.stderr
    assert (tmp_path / "taken" / "file").read_text() == "mine"
