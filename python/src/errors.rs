//! `envhost.EnvhostError`: every failure of the embedding API as one Python exception carrying
//! the coded fields of http-api.md#conventions.

use envhost::protocol::CodedError;
use envhost::protocol::error::Applied;
use envhost::{ComputerError, CreateError, DataError, SeedError, SnapshotError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    envhost,
    EnvhostError,
    PyException,
    "A call that failed. `code` (str, e.g. `\"too_many_episodes\"`), `message` (str), \
     `retryable` (bool), `applied` (`\"yes\"`, `\"no\"` or `\"unknown\"`: whether the effect \
     happened), `hint` (str or None) and `status` (the HTTP status the same failure answers over \
     HTTP) are its attributes; `str(error)` is `\"code: message\"`."
);

/// `error` as an [`EnvhostError`] with its fields as attributes.
pub fn coded(py: Python<'_>, error: &CodedError) -> PyErr {
    let err = EnvhostError::new_err(format!("{}: {}", error.code, error.message));
    let value = err.value(py);
    let applied = match error.applied {
        Applied::Yes => "yes",
        Applied::No => "no",
        Applied::Unknown => "unknown",
    };
    let _ = value.setattr("code", error.code.as_str());
    let _ = value.setattr("message", error.message.as_str());
    let _ = value.setattr("applied", applied);
    let _ = value.setattr("status", error.status);
    let _ = value.setattr("retryable", error.retryable);
    let _ = value.setattr("hint", error.hint.as_deref());
    err
}

/// `invalid_params` (400) with `message`: arguments that do not fit, refused before any call.
pub fn invalid_params(py: Python<'_>, message: impl Into<String>) -> PyErr {
    coded(py, &CodedError::invalid_params(message))
}

/// A data-plane failure of operation `op` (`"reset"`, `"add"`, `"get"`): `invalid_params`
/// (-32602's), `{op}_failed` (-32000's, applied unknown), or `busy` (retryable, nothing applied).
pub fn data(py: Python<'_>, op: &str, error: DataError) -> PyErr {
    let error = match error {
        DataError::Params(detail) => CodedError::invalid_params(detail),
        DataError::Failed(message) => {
            let mut failed = CodedError::new(format!("{op}_failed"), message);
            failed.status = 422;
            failed.applied = Applied::Unknown;
            failed
        }
        DataError::Busy(e) => e.to_coded(),
    };
    coded(py, &error)
}

/// A creation's failure: `environment_not_found`, `too_many_episodes`, `unavailable`.
pub fn create(py: Python<'_>, error: &CreateError) -> PyErr {
    coded(py, &error.to_coded())
}

/// A seeded creation's failure: the creation's, or its `data/add`'s as `add_failed`.
pub fn seed(py: Python<'_>, error: SeedError) -> PyErr {
    match error {
        SeedError::Create(e) => create(py, &e),
        SeedError::Data(e) => data(py, "add", e),
    }
}

/// A snapshot's, restore's or fork's failure (http-api.md#snapshots).
pub fn snapshot(py: Python<'_>, error: &SnapshotError) -> PyErr {
    coded(py, &error.to_coded())
}

/// A computer's creation's, fork's, snapshot's or restore's failure
/// (docs/computer.md#episodes-and-forks).
pub fn computer(py: Python<'_>, error: &ComputerError) -> PyErr {
    coded(py, &error.to_coded())
}
