"""{{name}}: an environment with one tool, made by `envhost new`."""
from typing import Annotated

from envhost_sdk import AgentEnvEnvironment, Field, ToolContext, environment_card, export, tool


@environment_card(name="{{name}}")
class Greeter(AgentEnvEnvironment):
    """The environment's state: one instance per episode."""

    def __init__(self) -> None:
        self.greetings = 0

    @tool(name="{environment_name}_greet")
    def greet(self, ctx: ToolContext, who: Annotated[str, Field(description="Who to greet.")]) -> str:
        """Greet someone; answers the greeting."""
        self.greetings += 1
        role = ctx.caller.role or "nobody"
        return f"Hello, {who}! (greeting {self.greetings} of this episode, asked by {role})"


Env = export(Greeter)  # the component's `env` export: componentize-py looks for `Env`
