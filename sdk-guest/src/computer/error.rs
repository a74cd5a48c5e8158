//! Constructors of [`DriverError`], an operation's coded failure.

use super::{Applied, DriverError, ErrorCode};

impl DriverError {
    /// An error with `code` and `message`, no hint, nothing applied ([`Applied::No`]).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
            applied: Applied::No,
        }
    }

    /// `unsupported`: a button, key, character or layout this driver does not have.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unsupported, message)
    }

    /// `device-unavailable`: the display or the input device cannot be reached now (the host
    /// answers it as retryable).
    pub fn device_unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::DeviceUnavailable, message)
    }

    /// `delivery-failed` with [`Applied::Unknown`]: input may have partly arrived.
    pub fn delivery_failed(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::DeliveryFailed, message).applied(Applied::Unknown)
    }

    /// `internal`: anything else.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// Sets whether the operation's effect happened.
    pub fn applied(mut self, applied: Applied) -> Self {
        self.applied = applied;
        self
    }

    /// Sets the hint, e.g. `did you mean Control?`.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_set_code_and_applied() {
        let e = DriverError::delivery_failed("dropped").hint("retry");
        assert_eq!(e.code, ErrorCode::DeliveryFailed);
        assert_eq!(e.applied, Applied::Unknown);
        assert_eq!(e.hint.as_deref(), Some("retry"));
        assert_eq!(DriverError::unsupported("no").applied, Applied::No);
    }
}
