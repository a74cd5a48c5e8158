//! The default [`FeatureSet`]: what a driver declares when it says nothing else.

use super::{Button, FeatureSet};

/// The reference SDK's defaults (computer.md#features): the left button only, single clicks,
/// every key, 10,000 code points of text, 60,000 ms waits, two-point drags of up to 10,000 ms,
/// 100 key repeats, 100 wheel notches, the host's own platform, no `supports` entries. A
/// `#[features]` method changes what it needs with `..FeatureSet::default()`.
impl Default for FeatureSet {
    fn default() -> Self {
        Self {
            buttons: vec![Button::Left],
            max_click_count: 1,
            keys: None,
            max_text_length: 10_000,
            max_wait_ms: 60_000,
            max_drag_points: 2,
            max_duration_ms: 10_000,
            max_key_repeat: 100,
            max_scroll_amount: 100,
            platform: None,
            supports: "[]".into(),
        }
    }
}
