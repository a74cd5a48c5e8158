//! What an environment may answer an MCP request beyond tools (protocol.md#resources-and-prompts):
//! each method's result, checked against rmcp's model type for it.

use rmcp::model::{
    CompleteResult, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ReadResourceResult,
};
use serde::de::DeserializeOwned;

/// The MCP methods an environment may answer through `call-mcp`.
pub const METHODS: [&str; 6] = [
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// Checks that `answer`, JSON text, is a result of `method`.
///
/// # Errors
/// What does not fit, in serde_json's words; any method but [`METHODS`] fits nothing.
pub fn check(method: &str, answer: &str) -> Result<(), String> {
    fn fits<T: DeserializeOwned>(method: &str, answer: &str) -> Result<(), String> {
        serde_json::from_str::<T>(answer)
            .map(drop)
            .map_err(|e| format!("a {method} result that does not fit MCP's shape: {e}"))
    }
    match method {
        "resources/list" => fits::<ListResourcesResult>(method, answer),
        "resources/templates/list" => fits::<ListResourceTemplatesResult>(method, answer),
        "resources/read" => fits::<ReadResourceResult>(method, answer),
        "prompts/list" => fits::<ListPromptsResult>(method, answer),
        "prompts/get" => fits::<GetPromptResult>(method, answer),
        "completion/complete" => fits::<CompleteResult>(method, answer),
        other => Err(format!("an answer to {other}, which no environment serves")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_of_the_methods_shape_are_taken_and_others_refused() {
        let read = r#"{"contents": [{"uri": "test://a", "mimeType": "text/plain", "text": "hi"}]}"#;
        assert_eq!(check("resources/read", read), Ok(()));
        assert!(check("resources/read", r#"{"contents": [{"text": "no uri"}]}"#).is_err());
        assert!(check("prompts/get", r#"{"messages": "nope"}"#).is_err());
        assert_eq!(
            check("completion/complete", r#"{"completion": {"values": []}}"#),
            Ok(())
        );
        assert!(check("tools/call", "{}").is_err());
    }
}
