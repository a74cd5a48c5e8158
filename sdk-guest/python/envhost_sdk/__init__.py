"""Write an agent environment in Python, as a WebAssembly component that envhost serves over the
agentenv protocol (card, JSON-RPC data plane, MCP tools, extensions, tool access).

The decorators are shaped like the reference SDK's (`agentenv_protocol`), so porting an
environment is mostly changing its imports::

    from typing import Annotated
    from envhost_sdk import AgentEnvEnvironment, AgentEnvError, Field, ToolContext, environment_card, export, tool

    @environment_card(name="counter")
    class Counter(AgentEnvEnvironment):
        def __init__(self) -> None:
            self.count = 0

        @tool(name="{environment_name}_add")
        def add(self, by: Annotated[int, Field(description="How much to add.")]) -> int:
            \"\"\"Add `by` to the counter; answers the new value.\"\"\"
            self.count += by
            return self.count

    Env = export(Counter)  # the component's `env` export, which componentize-py looks for

Import every module an environment uses at the top of its app module: componentize-py snapshots
the interpreter after importing it, and the component has no filesystem, so a module first
imported during a call is not found.

What the host does for every environment, so that the guest never has to: resolving
`{environment_name}` in tool names, validating tool arguments against their schemas, role and
session parsing, per-role tool access, fetching `file://` and `https://` parts, and turning
`AgentEnvError`s into the protocol's error shapes.
"""
from __future__ import annotations

from .context import Caller, ToolContext
from .environment import (
    AgentEnvEnvironment,
    ImageContent,
    add_data,
    environment_card,
    extension,
    get_data,
    mcp_requests,
    reset_data,
    tool,
)
from .errors import AgentEnvError, Applied
from .parts import DataPart, FilePart, FileWithBytes, FileWithUri, Part, TextPart
from .schema import Field
from .serving import EnvironmentExtension, EnvironmentTool
from .transfers import DATA_OBJECTS_EXTENSION_URI, uploaded_file_part

__all__ = [
    "DATA_OBJECTS_EXTENSION_URI", "EnvironmentExtension", "EnvironmentTool", "uploaded_file_part", "AgentEnvEnvironment", "AgentEnvError", "Applied", "Caller", "DataPart", "Field", "FilePart", "FileWithBytes",
    "FileWithUri", "ImageContent", "Part", "TextPart", "ToolContext", "add_data", "environment_card", "export",
    "extension", "get_data", "mcp_requests", "reset_data", "tool",
]


def export(cls: type) -> type:
    """The component's `env` export serving the environment class `cls`: assign it to `Env` in
    the app module componentize-py builds (`Env = export(MyEnv)`). Only callable inside a
    component build, where componentize-py's `wit_world` bindings exist."""
    from .component import export as export_component
    return export_component(cls)
