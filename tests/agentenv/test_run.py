"""agent-env, unchanged, runs whole tasks on envhost (docs/agent-env.md): the example bundle's
`post` task (deploy_env, deploy_agent, prompt_agent and two verifiers) and its `checks` task
(agent-env's own checks of the agent and of the environment), then tears everything down."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import BUNDLES, COMPONENTS, ROOT

AGENT_ENV = str(Path(sys.executable).parent / "agent-env")


def agent_env(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([AGENT_ENV, *args], cwd=BUNDLES, env=env, capture_output=True, text=True,
                          timeout=600)


def leftovers(envhost) -> tuple[list, list]:
    with envhost.control() as client:
        deployments = client.get("/deployments").json()["deployments"]
        episodes = [e for e in client.get("/episodes").json()["episodes"] if not e["root"]]
    return deployments, episodes


def test_the_plugin_registers_both_providers(agent_env_home):
    listed = agent_env(agent_env_home, "plugin", "list")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "agentenv-envhost" in listed.stdout + listed.stderr
    checked = agent_env(agent_env_home, "plugin", "check", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    contributions = [c for p in json.loads(checked.stdout)["plugins"] if p["name"] == "agentenv-envhost"
                     for c in p["contributions"]]
    assert all(c["status"] == "active" for c in contributions), contributions
    assert {(c["group"], c["name"]) for c in contributions} == {
        ("agent_env.env_providers", "envhost"), ("agent_env.sandbox_providers", "envhost")}


def test_a_whole_task_passes_and_leaves_nothing_behind(envhost, agent_env_home):
    before = leftovers(envhost)
    run = agent_env(agent_env_home, "run", "slack", "--sandbox", "envhost", "--task", "post")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "passed (answer: 1, posted: 1)" in output, output
    assert "Tore down 2 sandboxes" in output, output
    assert leftovers(envhost) == before


def test_agent_envs_own_checks_pass(envhost, agent_env_home):
    run = agent_env(agent_env_home, "run", "slack", "--sandbox", "envhost", "--task", "checks")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    for step in ("card", "core", "env-card", "env-core", "tool-schema"):
        assert f" {step} (verify_" in output and "failed" not in output, output


def test_the_plugin_starts_a_local_server_from_its_settings(envhost, tmp_path):
    """No URL configured: the plugin runs `envhost serve` with the components its settings name,
    for as long as agent-env runs."""
    binary = os.environ.get("ENVHOST_BIN", str(ROOT / "target/release/envhost"))
    config = tmp_path / "config.toml"
    config.write_text(f"""
[plugins.agentenv-envhost]
envhost = "{Path(binary).resolve()}"
components = {{ slack = "{COMPONENTS / 'slack.wasm'}" }}
agents = {{ "tool-agent" = "{COMPONENTS / 'tool_agent.wasm'}" }}
model_url = "{envhost.model_url}"
seeds = {{ slack = "{BUNDLES / 'seeds/slack.json'}" }}
""")
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("ENVHOST_")}
    env.update(HOME=str(home), AGENT_ENV_CONFIG=str(config), PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    run = agent_env(env, "run", "slack", "--sandbox", "envhost", "--task", "post")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "passed (answer: 1, posted: 1)" in output, output
