"""The slack example environment on the Python SDK (envhost_sdk): the component's app module,
serving `slack_env.py`, which is the reference's slack (tests/reference-ports/slack/reference.py)
with its imports changed and nothing else.

Build: `make guests-py` (writes guests/target/wasm32-wasip2/release/slack-py.wasm).
"""
from envhost_sdk import export
from slack_env import SlackEnv

Env = export(SlackEnv)
