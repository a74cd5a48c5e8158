//! A computer's data plane (computer.md#data): `data/add` takes `data` parts, which seed the
//! desktop of a driver that keeps a state of its own, and file parts, written under the granted
//! home; `data/get` answers the state as a `data` part, then the data paths' files.

use serde_json::{Map, Value};

use super::files;

/// What a `data/add` asks for, checked: states to seed, in order, then files to write.
#[derive(Debug, Default, PartialEq)]
pub struct Added {
    /// Each `data` part's `data`, as JSON text.
    pub seeds: Vec<String>,
    /// Each file part's path under the home and bytes.
    pub files: Vec<(String, Vec<u8>)>,
}

/// The message of the `add_failed` error when `data/add`'s `parts` is not a list.
pub const NOT_A_LIST: &str = "parts is a list of parts";

/// The `parts` of a `data/add` (JSON part objects: `{"kind": "data", "data"}`, or file parts
/// whose metadata names their path under [`files::MARKER`]), for a computer that keeps a state
/// (`state`) and has a home (`home`).
///
/// # Errors
/// The message of the `add_failed` error: a `data` part where the driver keeps no state, a
/// file part without a home, or a file part [`files::parts`] refuses.
pub fn added(parts: &[Value], state: bool, home: bool) -> Result<Added, String> {
    let (data, others): (Vec<&Value>, Vec<&Value>) = parts
        .iter()
        .partition(|p| p.get("kind").and_then(Value::as_str) == Some("data"));
    if !data.is_empty() && !state {
        return Err(
            "this computer's driver keeps no state of its own to seed: data/add takes file parts"
                .into(),
        );
    }
    if !others.is_empty() && !home {
        return Err("no home is granted for files: data/add takes data parts".into());
    }
    let seeds = data
        .iter()
        .map(|part| {
            part.get("data")
                .map(Value::to_string)
                .ok_or_else(|| "a data part has no data".to_owned())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let files = if others.is_empty() {
        Vec::new()
    } else {
        let mut file_params = Map::new();
        file_params.insert(
            "parts".into(),
            Value::Array(others.into_iter().cloned().collect()),
        );
        files::parts(&file_params)?
    };
    Ok(Added { seeds, files })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(parts: Value) -> Vec<Value> {
        let Value::Array(parts) = parts else {
            unreachable!()
        };
        parts
    }

    #[test]
    fn data_parts_seed_and_file_parts_need_a_home() {
        let file = json!({"kind": "file", "file": {"bytes": "aGk="},
            "metadata": {files::MARKER: {"path": "a.txt"}}});
        let both = params(json!([{"kind": "data", "data": {"saved": 2}}, file]));
        let added = added(&both, true, true).unwrap();
        assert_eq!(added.seeds, [r#"{"saved":2}"#]);
        assert_eq!(added.files, [("a.txt".to_owned(), b"hi".to_vec())]);
        assert!(
            super::added(&both, false, true)
                .unwrap_err()
                .contains("no state")
        );
        assert!(
            super::added(&both, true, false)
                .unwrap_err()
                .contains("no home")
        );
        let empty = params(json!([{"kind": "data"}]));
        assert!(
            super::added(&empty, true, false)
                .unwrap_err()
                .contains("no data")
        );
    }
}
