//! The computer contract's error codes (computer.md#errors): each code's HTTP status, whether
//! it may be retried and whether its action may have happened, as [`CodedError`]s.

use crate::error::{Applied, CodedError};

/// A code of the contract's error table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// 400, nothing applied: a bad value.
    InvalidArgument,
    /// 400, nothing applied: a point or region outside the frame or the norm range.
    OutOfBounds,
    /// 409, nothing applied, retryable: a frame unknown, no longer kept, or from another display.
    StaleFrame,
    /// 409, nothing applied, retryable: the input queue was not free in time.
    InputBusy,
    /// 403, nothing applied: a tool disabled for the caller's role.
    PermissionDenied,
    /// 501, nothing applied: a button, key, character or layout this computer lacks.
    Unsupported,
    /// 501, nothing applied: reserved for background delivery.
    BackgroundUnavailable,
    /// 404, nothing applied: reserved for drivers.
    TargetUnavailable,
    /// 503, nothing applied, retryable: not ready, or the display cannot be reached.
    DeviceUnavailable,
    /// 429, nothing applied, retryable: reserved for drivers.
    LimitExceeded,
    /// 504, applied unknown: reserved for drivers.
    Timeout,
    /// 502, applied unknown: an input operation failed.
    DeliveryFailed,
    /// 500, applied unknown: anything else.
    Internal,
}

impl Code {
    /// The code as the wire spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "invalid_argument",
            Self::OutOfBounds => "out_of_bounds",
            Self::StaleFrame => "stale_frame",
            Self::InputBusy => "input_busy",
            Self::PermissionDenied => "permission_denied",
            Self::Unsupported => "unsupported",
            Self::BackgroundUnavailable => "background_unavailable",
            Self::TargetUnavailable => "target_unavailable",
            Self::DeviceUnavailable => "device_unavailable",
            Self::LimitExceeded => "limit_exceeded",
            Self::Timeout => "timeout",
            Self::DeliveryFailed => "delivery_failed",
            Self::Internal => "internal",
        }
    }

    /// The HTTP status of an extension answer with this code.
    pub fn status(self) -> u16 {
        match self {
            Self::InvalidArgument | Self::OutOfBounds => 400,
            Self::StaleFrame | Self::InputBusy => 409,
            Self::PermissionDenied => 403,
            Self::Unsupported | Self::BackgroundUnavailable => 501,
            Self::TargetUnavailable => 404,
            Self::DeviceUnavailable => 503,
            Self::LimitExceeded => 429,
            Self::Timeout => 504,
            Self::DeliveryFailed => 502,
            Self::Internal => 500,
        }
    }

    /// Whether a caller may retry a call refused with this code.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::StaleFrame | Self::InputBusy | Self::DeviceUnavailable | Self::LimitExceeded
        )
    }

    /// Whether the action may have happened when this code is raised.
    pub fn applied(self) -> Applied {
        match self {
            Self::Timeout | Self::DeliveryFailed | Self::Internal => Applied::Unknown,
            _ => Applied::No,
        }
    }

    /// A [`CodedError`] of this code with `message`.
    pub fn error(self, message: impl Into<String>) -> CodedError {
        CodedError {
            code: self.as_str().to_owned(),
            message: message.into(),
            retryable: self.retryable(),
            applied: self.applied(),
            hint: None,
            status: self.status(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_code_has_the_tables_status_retry_and_applied() {
        let stale = Code::StaleFrame.error("frame f9 is unknown");
        assert_eq!(
            (
                stale.code.as_str(),
                stale.status,
                stale.retryable,
                stale.applied
            ),
            ("stale_frame", 409, true, Applied::No)
        );
        let failed = Code::DeliveryFailed.error("the X server went away");
        assert_eq!(
            (failed.status, failed.retryable, failed.applied),
            (502, false, Applied::Unknown)
        );
        assert_eq!(Code::Unsupported.status(), 501);
        assert!(!Code::OutOfBounds.retryable());
    }
}
