//! A counter per caller role: the README's example environment, shown there whole.

use std::collections::BTreeMap;

use envhost_sdk::{EnvError, Part, ToolContext, environment};
use serde_json::json;

/// The counters, by role (`default` for a caller without one).
#[derive(Default)]
pub struct Counter {
    counts: BTreeMap<String, i64>,
}

#[environment(name = "counter")]
impl Counter {
    /// Add to the caller's counter; answers the new value.
    #[tool(name = "{environment_name}_add")]
    fn add(
        &mut self,
        ctx: ToolContext,
        #[arg(description = "How much to add (may be negative).")] by: i64,
    ) -> Result<i64, EnvError> {
        let role = ctx.caller.role.unwrap_or_else(|| "default".into());
        let count = self.counts.entry(role).or_default();
        *count = count
            .checked_add(by)
            .ok_or_else(|| EnvError::new("overflow", "the counter would overflow"))?;
        Ok(*count)
    }

    /// Every role's counter.
    #[tool(name = "{environment_name}_counts", annotations(read_only_hint = true))]
    fn counts(&self) -> BTreeMap<String, i64> {
        self.counts.clone()
    }

    #[reset]
    fn reset(&mut self) {
        self.counts.clear();
    }

    #[get_data]
    fn get(&self) -> Result<Vec<Part>, EnvError> {
        Ok(vec![Part::data(json!({ "counts": self.counts }))?])
    }
}
