//! Constructors of the terminals [`Completion`] and [`Failure`], and the failure a model error
//! ends a turn with.

use serde_json::Value;

use super::{Completion, Failure, ModelError};

impl Completion {
    /// The `completed` terminal without data: `{"type": "completed"}`.
    pub fn new() -> Self {
        Self { data: None }
    }

    /// The `completed` terminal with `data`: `{"type": "completed", "data": ...}`; the buffered
    /// answer (agents.md#serving) carries it as its `data`.
    pub fn with_data(data: Value) -> Self {
        Self {
            data: Some(data.to_string()),
        }
    }
}

impl Default for Completion {
    fn default() -> Self {
        Self::new()
    }
}

impl Failure {
    /// The `failed` terminal `{"type": "failed", "details", "retryable": false, "code"}`: `code`
    /// is machine-readable (`turn_limit`), `details` is for people.
    pub fn new(code: impl Into<String>, details: impl Into<String>) -> Self {
        Self {
            details: details.into(),
            retryable: false,
            code: Some(code.into()),
        }
    }

    /// Marks the failure as one that trying the same turn again may get past.
    pub fn retryable(mut self) -> Self {
        self.retryable = true;
        self
    }
}

impl From<ModelError> for Failure {
    /// The failure of a turn the model could not answer (agents.md#the-model):
    /// `rate_limited` (retryable, the details saying when to try again), `model_unavailable`
    /// (retryable) or `model_refused` (not retryable).
    fn from(error: ModelError) -> Self {
        match error {
            ModelError::RateLimited(ms) => Self::new(
                "rate_limited",
                format!("the model is rate limited; try again in {ms} ms"),
            )
            .retryable(),
            ModelError::Unavailable(why) => Self::new(
                "model_unavailable",
                format!("the model is unavailable: {why}"),
            )
            .retryable(),
            ModelError::InvalidRequest(why) => Self::new(
                "model_refused",
                format!("the model refused the request: {why}"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_completion_carries_its_data_as_json_text() {
        assert_eq!(Completion::new().data, None);
        let done = Completion::with_data(json!({"posted": true}));
        assert_eq!(done.data.as_deref(), Some(r#"{"posted":true}"#));
    }

    #[test]
    fn a_failure_is_not_retryable_unless_marked() {
        let failure = Failure::new("turn_limit", "too many steps");
        assert_eq!(failure.code.as_deref(), Some("turn_limit"));
        assert_eq!(failure.details, "too many steps");
        assert!(!failure.retryable);
        assert!(failure.retryable().retryable);
    }

    #[test]
    fn model_errors_fail_with_their_codes_and_retryability() {
        for (error, code, retryable) in [
            (ModelError::RateLimited(2_000), "rate_limited", true),
            (
                ModelError::Unavailable("HTTP 503".into()),
                "model_unavailable",
                true,
            ),
            (
                ModelError::InvalidRequest("HTTP 400".into()),
                "model_refused",
                false,
            ),
        ] {
            let failure = Failure::from(error);
            assert_eq!(failure.code.as_deref(), Some(code));
            assert_eq!(failure.retryable, retryable);
        }
        let limited = Failure::from(ModelError::RateLimited(2_000));
        assert_eq!(
            limited.details,
            "the model is rate limited; try again in 2000 ms"
        );
    }
}
