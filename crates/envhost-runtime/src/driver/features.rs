//! The checks a driver's declared features must pass when it is loaded (computer.md#features):
//! the constraints the reference SDK's class check applies.

use envhost_protocol::computer::keys;

use super::bindings::agentenv::computer::types::{Button, FeatureSet};

/// Whether `key` is a canonical W3C key value: one character, or a named key in its W3C case.
pub(crate) fn is_canonical_key(key: &str) -> bool {
    keys::canonical(key).is_ok_and(|canonical| canonical == key)
}

/// Checks `features` as the reference's class check does; answers every problem found, one
/// sentence each.
pub(crate) fn check(features: &FeatureSet) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    if !features.buttons.contains(&Button::Left) {
        problems.push("buttons must include left".to_owned());
    }
    let mut least = |name: &str, value: u32, min: u32| {
        if value < min {
            problems.push(format!("{name} is at least {min}, got {value}"));
        }
    };
    least("max_click_count", features.max_click_count, 1);
    least("max_text_length", features.max_text_length, 1);
    least("max_wait_ms", features.max_wait_ms, 60_000);
    least("max_drag_points", features.max_drag_points, 2);
    least("max_key_repeat", features.max_key_repeat, 1);
    least("max_scroll_amount", features.max_scroll_amount, 1);
    if let Some(keys) = &features.keys {
        for key in keys.iter().filter(|k| !is_canonical_key(k)) {
            problems.push(format!("keys names {key:?}, not a canonical W3C key value"));
        }
    }
    match serde_json::from_str::<serde_json::Value>(&features.supports) {
        Ok(serde_json::Value::Array(_)) => {}
        _ => problems.push("supports is the JSON text of a list".to_owned()),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> FeatureSet {
        FeatureSet {
            buttons: vec![Button::Left, Button::Right],
            max_click_count: 3,
            keys: None,
            max_text_length: 10_000,
            max_wait_ms: 60_000,
            max_drag_points: 50,
            max_duration_ms: 10_000,
            max_key_repeat: 100,
            max_scroll_amount: 100,
            platform: None,
            supports: "[]".into(),
        }
    }

    #[test]
    fn the_reference_features_pass() {
        assert_eq!(check(&reference()), Ok(()));
    }

    #[test]
    fn each_broken_constraint_is_named() {
        let features = FeatureSet {
            buttons: vec![Button::Right],
            max_wait_ms: 1_000,
            max_drag_points: 1,
            keys: Some(vec![
                "a".into(),
                "Control".into(),
                "ctrl".into(),
                "F25".into(),
            ]),
            supports: "{}".into(),
            ..reference()
        };
        assert_eq!(
            check(&features).unwrap_err(),
            [
                "buttons must include left",
                "max_wait_ms is at least 60000, got 1000",
                "max_drag_points is at least 2, got 1",
                "keys names \"ctrl\", not a canonical W3C key value",
                "keys names \"F25\", not a canonical W3C key value",
                "supports is the JSON text of a list",
            ]
        );
    }

    #[test]
    fn function_keys_run_from_f1_to_f24() {
        assert!(is_canonical_key("F1") && is_canonical_key("F24") && is_canonical_key("é"));
        assert!(!is_canonical_key("F0") && !is_canonical_key("F01") && !is_canonical_key("f1"));
    }
}
