//! {{name}}: an environment with one tool, made by `envhost new`.

use envhost_sdk::{ToolContext, environment};

/// The environment's state: one instance per episode.
#[derive(Default)]
pub struct Env {
    greetings: u64,
}

#[environment(name = "{{name}}")]
impl Env {
    /// Greet someone; answers the greeting.
    #[tool(name = "{environment_name}_greet")]
    fn greet(
        &mut self,
        ctx: ToolContext,
        #[arg(description = "Who to greet.")] who: String,
    ) -> String {
        self.greetings += 1;
        let role = ctx.caller.role.unwrap_or_else(|| "nobody".into());
        format!("Hello, {who}! (greeting {} of this episode, asked by {role})", self.greetings)
    }
}
