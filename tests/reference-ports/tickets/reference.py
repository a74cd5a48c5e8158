"""A ticket desk written for the reference SDK (agentenv-framework-protocol), using what the slack
example does not: a hook that refuses calls before the tool runs (`on_tool_call`), a mount hook that
rewrites a tool's description (`served_tools`), a hidden tool with its `_meta`, a verbatim
`CallToolResult` with an image, an extension served with `op` whose extension-level params come from
`extension_params`, and a declaration-only extension (`declared_extensions`).

Run on the reference: MCP_HOST=127.0.0.1 MCP_PORT=18765 python reference.py
The envhost port (python/tickets.py) is this file with its imports changed.
"""
from __future__ import annotations

import base64
from typing import Annotated, Optional

from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import Field
from typing_extensions import TypedDict

from agentenv_protocol import (
    AgentEnvEnvironment,
    AgentEnvError,
    DataPart,
    EnvironmentExtension,
    ToolContext,
    add_data,
    environment_card,
    extension,
    get_data,
    reset_data,
    tool,
)

ADMIN_URI = "urn:example:tickets-admin/v1"
INTAKE_URI = "urn:agentenv:intake/v1"
#: A 1x1 red PNG: the queue's chart.
CHART = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


class Ticket(TypedDict):
    id: int
    title: str
    priority: int
    status: str
    owner: Optional[str]


@environment_card(name="tickets")
class Tickets(AgentEnvEnvironment):
    tool_access = True

    def __init__(self) -> None:
        self.tickets: list[dict] = []

    # ---------------------------------------------------------------- mount hooks

    def served_tools(self, tools: list) -> list:
        return [t.model_copy(update={"description": "Lists the open tickets, most urgent first."})
                if t.name.endswith("_queue") else t for t in tools]

    def extension_params(self, uri: str) -> dict:
        return {"max_priority": 5} if uri == ADMIN_URI else {}

    def declared_extensions(self) -> list:
        return [EnvironmentExtension(uri=INTAKE_URI, description="What data/add takes.",
                                     params={"add": [{"part": "data", "format": "json", "load": "replace"}]})]

    def on_tool_call(self, context: ToolContext):
        if context.caller.role == "viewer" and not context.tool.endswith("_queue"):
            return CallToolResult(content=[TextContent(type="text", text="viewers may only read the queue")],
                                  isError=True)
        return None

    # ---------------------------------------------------------------- data plane

    @reset_data
    def reset(self) -> None:
        self.tickets = []

    @add_data
    def add(self, parts: list) -> None:
        tickets = []
        for part in parts:
            if not isinstance(part, DataPart):
                raise ValueError("tickets load from data parts only")
            for ticket in part.data.get("tickets", []):
                tickets.append({"id": len(tickets) + 1, "title": str(ticket["title"]),
                                "priority": int(ticket.get("priority", 3)), "status": "open",
                                "owner": ticket.get("owner")})
        self.tickets = tickets

    @get_data
    def get(self) -> list:
        return [DataPart(data={"tickets": self.tickets})]

    # ---------------------------------------------------------------- tools

    @tool(name="{environment_name}_open", annotations={"destructiveHint": False})
    def open_ticket(self, ctx: ToolContext,
                    title: Annotated[str, Field(description="What is wrong.")],
                    priority: Annotated[int, Field(description="1 (urgent) to 5.")] = 3) -> Ticket:
        """Opens a ticket owned by the caller."""
        if not 1 <= priority <= 5:
            raise AgentEnvError("invalid_priority", f"priority {priority} is not between 1 and 5",
                                hint="use 1 for urgent and 5 for whenever")
        ticket = {"id": len(self.tickets) + 1, "title": title, "priority": priority, "status": "open",
                  "owner": ctx.caller.role}
        self.tickets.append(ticket)
        return ticket

    @tool(name="{environment_name}_queue", annotations={"readOnlyHint": True})
    def queue(self) -> list[Ticket]:
        """Lists the open tickets."""
        return sorted((t for t in self.tickets if t["status"] == "open"), key=lambda t: (t["priority"], t["id"]))

    @tool(name="{environment_name}_chart")
    def chart(self) -> CallToolResult:
        """The queue as a chart."""
        return CallToolResult(content=[TextContent(type="text", text=f"{len(self.tickets)} tickets"),
                                       ImageContent(type="image", data=base64.b64encode(CHART).decode(),
                                                    mimeType="image/png")],
                              structuredContent={"tickets": len(self.tickets)}, isError=False)

    @tool(name="{environment_name}_escalate", hidden_by_default=True, meta={"example.com/owner": "ops"})
    def escalate(self, ticket: Annotated[int, Field(description="The ticket's id.")]) -> str:
        """Raises a ticket to priority 1."""
        for t in self.tickets:
            if t["id"] == ticket:
                t["priority"] = 1
                return "escalated"
        raise AgentEnvError("ticket_not_found", f"no ticket {ticket}")

    # ---------------------------------------------------------------- extension

    @extension(ADMIN_URI, op="count", method="GET", description="Ticket administration.")
    def count(self) -> dict:
        return {"open": sum(t["status"] == "open" for t in self.tickets), "all": len(self.tickets)}

    @extension(ADMIN_URI, op="close", method="POST")
    def close(self, ticket: int) -> dict:
        for t in self.tickets:
            if t["id"] == ticket:
                t["status"] = "closed"
                return {"id": ticket, "status": "closed"}
        raise AgentEnvError("ticket_not_found", f"no ticket {ticket}", status=404)


if __name__ == "__main__":
    Tickets().serve()
