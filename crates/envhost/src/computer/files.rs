//! A computer's files (computer.md#files): `data/add` writes file parts under the session
//! user's home, each atomically (a temporary file in the same directory, renamed over the
//! destination); `data/get` answers the files under the settings' data paths.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

/// The metadata key that names a file part's path.
pub const MARKER: &str = "urn:agentenv:data-objects/v1";

/// Whether `path` is a normalized relative POSIX path: no backslash, no empty, `.` or `..`
/// segment.
pub fn is_normal(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

/// The file parts of `data/add`'s params, checked: `(path, bytes)` each.
///
/// # Errors
/// The message of the `add_failed` error the reference answers.
pub fn parts(params: &Map<String, Value>) -> Result<Vec<(String, Vec<u8>)>, String> {
    let Some(Value::Array(parts)) = params.get("parts") else {
        return Err("parts is a list of file parts".into());
    };
    let mut files = Vec::with_capacity(parts.len());
    for part in parts {
        let kind = part.get("kind").and_then(Value::as_str).unwrap_or_default();
        let path = part
            .get("metadata")
            .and_then(|m| m.get(MARKER))
            .and_then(|m| m.get("path"))
            .and_then(Value::as_str);
        let (Some(path), "file") = (path, kind) else {
            return Err(format!(
                "data/add on a computer takes file parts naming their path under {MARKER}, got a {} part",
                if kind.is_empty() { "malformed" } else { kind }
            ));
        };
        if !is_normal(path) {
            return Err(format!(
                "the part's path '{path}' is not a normalized path relative to the home"
            ));
        }
        let bytes = match part
            .get("file")
            .and_then(|f| f.get("bytes"))
            .and_then(Value::as_str)
        {
            Some(text) => BASE64
                .decode(text)
                .map_err(|_| "the part's bytes are not base64".to_owned())?,
            None => {
                return Err(
                    "the part's file has no bytes (fetching by URI is not supported)".into(),
                );
            }
        };
        files.push((path.to_owned(), bytes));
    }
    Ok(files)
}

/// Writes each of `files` under `home`, atomically.
///
/// # Errors
/// The path that could not be written and why, or a path resolving outside `home`.
pub fn write(home: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    let root = home
        .canonicalize()
        .map_err(|e| format!("the home {}: {e}", home.display()))?;
    for (path, bytes) in files {
        let target = root.join(path);
        let dir = target.parent().unwrap_or(&root).to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| format!("{path}: {e}"))?;
        let real = dir.canonicalize().map_err(|e| format!("{path}: {e}"))?;
        if !real.starts_with(&root) {
            return Err(format!(
                "the part's path '{path}' resolves outside the home"
            ));
        }
        let name = target
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("file");
        let temporary = real.join(format!(".{name}.{}.part", uuid::Uuid::new_v4().simple()));
        std::fs::write(&temporary, bytes).map_err(|e| format!("{path}: {e}"))?;
        if let Err(e) = std::fs::rename(&temporary, real.join(name)) {
            let _ = std::fs::remove_file(&temporary);
            return Err(format!("{path}: {e}"));
        }
    }
    Ok(())
}

/// Every regular file under `home`'s `data_paths` (files, or directories walked in sorted
/// order; missing ones and anything outside the home skipped) as a file part.
pub fn export(home: &Path, data_paths: &[String]) -> Vec<Value> {
    let Ok(root) = home.canonicalize() else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for data_path in data_paths {
        walk(&root, &root.join(data_path), &mut found);
    }
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
    found
        .into_iter()
        .filter_map(|(relative, path)| {
            let bytes = std::fs::read(&path).ok()?;
            let name = path.file_name()?.to_str()?.to_owned();
            let mime = mime_guess::from_path(&path).first_or_octet_stream();
            Some(json!({
                "kind": "file",
                "file": {"bytes": BASE64.encode(bytes), "mimeType": mime.essence_str(), "name": name},
                "metadata": {MARKER: {"path": relative}},
            }))
        })
        .collect()
}

fn walk(root: &Path, path: &Path, found: &mut Vec<(String, PathBuf)>) {
    let Ok(real) = path.canonicalize() else {
        return;
    };
    if !real.starts_with(root) {
        return;
    }
    if real.is_file() {
        if let Ok(relative) = real.strip_prefix(root) {
            found.push((relative.to_string_lossy().replace('\\', "/"), real));
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(&real) else {
        return;
    };
    let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    children.sort();
    for child in children {
        walk(root, &child, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_normalized_relative_paths_pass() {
        assert!(is_normal("a/b.txt") && is_normal(".agentenv-probe/fixture.py"));
        for bad in ["", "/abs", "a//b", "a/./b", "../x.txt", "a/", "a\\b"] {
            assert!(!is_normal(bad), "{bad}");
        }
    }

    #[test]
    fn files_written_are_exported_back() {
        let home =
            std::env::temp_dir().join(format!("envhost-files-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&home).unwrap();
        let params: Map<String, Value> = serde_json::from_value(json!({"parts": [
            {"kind": "file", "file": {"bytes": "aGVsbG8="}, "metadata": {MARKER: {"path": "out/r.json"}}}
        ]}))
        .unwrap();
        write(&home, &parts(&params).unwrap()).unwrap();
        assert_eq!(std::fs::read(home.join("out/r.json")).unwrap(), b"hello");
        let exported = export(&home, &["out".into(), "missing".into()]);
        assert_eq!(exported.len(), 1);
        assert_eq!(exported[0]["file"]["mimeType"], "application/json");
        assert_eq!(exported[0]["metadata"][MARKER]["path"], "out/r.json");
        let text: Map<String, Value> =
            serde_json::from_value(json!({"parts": [{"kind": "text", "text": "x"}]})).unwrap();
        assert!(parts(&text).unwrap_err().contains("got a text part"));
        std::fs::remove_dir_all(&home).unwrap();
    }
}
