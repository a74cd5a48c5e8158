//! A computer's settings (computer.md#settings): one JSON object, from
//! `AGENTENV_COMPUTER_SETTINGS`; absent or empty means every default, and an unknown key or a
//! value out of range is refused.

use serde::Deserialize;

use super::spaces::Space;

/// The environment variable the settings are read from.
pub const SETTINGS_ENV: &str = "AGENTENV_COMPUTER_SETTINGS";

/// A computer's settings.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// What `data/get` returns, relative to the session user's home.
    pub data_paths: Vec<String>,
    /// The space when a call names none: `frame` or `norm`.
    #[serde(deserialize_with = "space")]
    pub default_space: Space,
    /// The norm grid when a call names none, 1 to 1,000,000.
    pub default_norm_scale: i64,
    /// The longest wait for the input queue, in seconds, above 0 and at most 3,600.
    pub queue_wait_s: f64,
    /// How long a tapped key stays down, in ms, 0 to 1,000.
    pub tap_hold_ms: u32,
    /// The pause between typed characters, in ms, 0 to 1,000.
    pub type_delay_ms: u32,
    /// The longest `hold_ms`, and when held keys are released, in ms, 0 to 600,000.
    pub max_hold_ms: u32,
    /// The keyboard layout.
    pub layout: String,
    /// A drag's duration when a call names none, in ms.
    pub drag_duration_ms: u32,
    /// The most bytes of each output stream of a command.
    pub exec_output_bytes: u64,
    /// A command's timeout when a call names none, in seconds, above 0 and at most 3,600.
    pub exec_timeout_s: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            data_paths: Vec::new(),
            default_space: Space::Frame,
            default_norm_scale: 1000,
            queue_wait_s: 30.0,
            tap_hold_ms: 50,
            type_delay_ms: 10,
            max_hold_ms: 10_000,
            layout: "us".into(),
            drag_duration_ms: 500,
            exec_output_bytes: 1 << 20,
            exec_timeout_s: 60.0,
        }
    }
}

fn space<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Space, D::Error> {
    let name = String::deserialize(deserializer)?;
    Space::parse(&name).map_err(|e| serde::de::Error::custom(e.message))
}

impl Settings {
    /// The settings in `raw` (the variable's value); `None` or empty gives the defaults.
    ///
    /// # Errors
    /// `AGENTENV_COMPUTER_SETTINGS is not valid computer settings: …`, naming the problem.
    pub fn parse(raw: Option<&str>) -> Result<Self, String> {
        match raw {
            None | Some("") => Ok(Self::default()),
            Some(raw) => Self::from_json(raw)
                .map_err(|why| format!("{SETTINGS_ENV} is not valid computer settings: {why}")),
        }
    }

    /// The settings in the JSON object `text`, every key left out at its default.
    ///
    /// # Errors
    /// What is wrong: text that is not such an object, an unknown key, a value out of range.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let settings: Self = serde_json::from_str(text).map_err(|e| e.to_string())?;
        settings.check()?;
        Ok(settings)
    }

    fn check(&self) -> Result<(), String> {
        let range = |name: &str, ok: bool, rule: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("{name} must be {rule}"))
            }
        };
        range(
            "default_norm_scale",
            (1..=1_000_000).contains(&self.default_norm_scale),
            "from 1 to 1000000",
        )?;
        range(
            "queue_wait_s",
            self.queue_wait_s > 0.0 && self.queue_wait_s <= 3600.0,
            "above 0 and at most 3600",
        )?;
        range("tap_hold_ms", self.tap_hold_ms <= 1000, "from 0 to 1000")?;
        range(
            "type_delay_ms",
            self.type_delay_ms <= 1000,
            "from 0 to 1000",
        )?;
        range(
            "max_hold_ms",
            self.max_hold_ms <= 600_000,
            "from 0 to 600000",
        )?;
        range("exec_output_bytes", self.exec_output_bytes > 0, "above 0")?;
        range(
            "exec_timeout_s",
            self.exec_timeout_s > 0.0 && self.exec_timeout_s <= 3600.0,
            "above 0 and at most 3600",
        )?;
        for path in &self.data_paths {
            let normal = !path.is_empty()
                && !path.contains('\\')
                && path
                    .split('/')
                    .all(|s| !s.is_empty() && s != "." && s != "..");
            range(
                "each data_paths entry",
                normal,
                "a normalized relative path",
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_set_is_every_default() {
        assert_eq!(Settings::parse(None).unwrap(), Settings::default());
        assert_eq!(Settings::parse(Some("")).unwrap(), Settings::default());
    }

    #[test]
    fn given_values_are_taken_and_bad_ones_refused() {
        let settings = Settings::parse(Some(
            r#"{"default_space": "norm", "queue_wait_s": 0.5, "data_paths": ["out"]}"#,
        ))
        .unwrap();
        assert_eq!(settings.default_space, Space::Norm);
        assert_eq!(settings.queue_wait_s, 0.5);
        assert_eq!(settings.tap_hold_ms, 50);
        for bad in [
            r#"{"colour": "red"}"#,
            r#"{"tap_hold_ms": 2000}"#,
            r#"{"default_space": "pixels"}"#,
            r#"{"data_paths": ["../up"]}"#,
            r#"{"queue_wait_s": 0}"#,
        ] {
            let refused = Settings::parse(Some(bad)).unwrap_err();
            assert!(
                refused.starts_with("AGENTENV_COMPUTER_SETTINGS is not valid computer settings: "),
                "{refused}"
            );
        }
    }
}
