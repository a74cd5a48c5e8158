// {{name}}: an environment with one tool, made by `envhost new`.
import { Environment, s } from "@envhost/sdk";

let greetings = 0; // one component instance is one episode: module state is the episode's state
const env_ = new Environment({ name: "{{name}}" });
env_.tool(
  {
    name: "{environment_name}_greet",
    description: "Greet someone; answers the greeting.",
    args: { who: s.string({ description: "Who to greet." }) },
    returns: s.string(),
  },
  function greet({ who }, ctx) {
    greetings += 1;
    const role = ctx.caller.role ?? "nobody";
    return `Hello, ${who}! (greeting ${greetings} of this episode, asked by ${role})`;
  },
);
export const env = env_.exports();
