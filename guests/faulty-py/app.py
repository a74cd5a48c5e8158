"""A Python environment whose own code lets exceptions out, to prove that a Python guest's
exception keeps its type on every path: a tool that raises (`faulty_py_raise`), a tool whose
answer is not JSON (`faulty_py_not_json`), a `data/get` that answers something other than parts,
a tool that exits the interpreter (`faulty_py_exit`) and one that raises what no handler catches
(`faulty_py_interrupt`): both end the instance, and the host keeps the last line the guest wrote
to stderr.

Build: `make guests-py` (writes guests/target/wasm32-wasip2/release/faulty-py.wasm).
"""
from __future__ import annotations

from typing import Annotated

from envhost_sdk import AgentEnvEnvironment, Field, environment_card, export, get_data, tool


class Opaque:
    """A value JSON cannot encode."""


@environment_card(name="faulty_py")
class FaultyPy(AgentEnvEnvironment):
    """Nothing to keep: every call misbehaves the same way."""

    @tool(name="{environment_name}_raise")
    def raise_(self, key: Annotated[str, Field(description="The key looked up in an empty dict.")]) -> str:
        """Looks `key` up in an empty dict: a KeyError."""
        return {}[key]

    @tool(name="{environment_name}_not_json")
    def not_json(self) -> dict:
        """Answers an object JSON cannot encode."""
        return {"value": Opaque()}

    @tool(name="{environment_name}_exit")
    def exit(self) -> str:
        """Exits the interpreter."""
        raise SystemExit("the faulty Python guest exits on request")

    @tool(name="{environment_name}_interrupt")
    def interrupt(self) -> str:
        """Raises KeyboardInterrupt, which no handler of the SDK's catches."""
        raise KeyboardInterrupt("the faulty Python guest is interrupted on request")

    @tool(name="{environment_name}_wrong_output")
    def wrong_output(self) -> int:
        """Answers a string where its output schema says an integer."""
        return "seven"  # type: ignore[return-value]

    @get_data
    def get(self) -> list:
        return ["not a part"]


Env = export(FaultyPy)
