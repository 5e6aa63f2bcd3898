//! Errors on both sides of the boundary, and their mapping to and from ABI status codes.
//!
//! A status code travels with a UTF-8 message; these types are the Rust view of that pair.

use crate::abi::{
    SWEX_ERR_FAILED, SWEX_ERR_INVALID_INPUT, SWEX_ERR_NOT_FOUND, SWEX_ERR_PANIC,
    SWEX_ERR_UNAVAILABLE,
};
use crate::types::ServiceId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a service call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServiceErrorKind {
    /// The arguments were not valid JSON for this service, or asked for something impossible.
    InvalidArgs,
    /// The path or symbol does not exist in the snapshot.
    NotFound,
    /// The host's backend does not provide this service (e.g. no dense index).
    Unavailable,
    /// Anything else (I/O error, broken index, lost connection to the host...).
    Failed,
    /// The host panicked while serving the call.
    Panic,
}

impl ServiceErrorKind {
    /// The ABI status code a service returns for this kind (`InvalidArgs` →
    /// [`SWEX_ERR_INVALID_INPUT`], `NotFound` → [`SWEX_ERR_NOT_FOUND`], `Unavailable` →
    /// [`SWEX_ERR_UNAVAILABLE`], `Failed` → [`SWEX_ERR_FAILED`], `Panic` → [`SWEX_ERR_PANIC`]);
    /// never [`SWEX_OK`](crate::abi::SWEX_OK).
    pub fn status(self) -> i32 {
        match self {
            ServiceErrorKind::InvalidArgs => SWEX_ERR_INVALID_INPUT,
            ServiceErrorKind::NotFound => SWEX_ERR_NOT_FOUND,
            ServiceErrorKind::Unavailable => SWEX_ERR_UNAVAILABLE,
            ServiceErrorKind::Failed => SWEX_ERR_FAILED,
            ServiceErrorKind::Panic => SWEX_ERR_PANIC,
        }
    }

    /// The kind for a non-OK status; unknown codes count as `Failed`.
    pub fn from_status(status: i32) -> ServiceErrorKind {
        match status {
            SWEX_ERR_INVALID_INPUT => ServiceErrorKind::InvalidArgs,
            SWEX_ERR_NOT_FOUND => ServiceErrorKind::NotFound,
            SWEX_ERR_UNAVAILABLE => ServiceErrorKind::Unavailable,
            SWEX_ERR_PANIC => ServiceErrorKind::Panic,
            _ => ServiceErrorKind::Failed,
        }
    }
}

/// A failed service call, as an explorer sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceError {
    /// The service that was called.
    pub service: ServiceId,
    /// Why it failed; [`ServiceErrorKind::Unavailable`] means this host lacks the service or its
    /// index, and an explorer may fall back to another service.
    pub kind: ServiceErrorKind,
    /// The host's message, UTF-8, for people (it names the path, the argument or the missing
    /// index).
    pub message: String,
}

impl ServiceError {
    /// A failure of `service` of the given kind, with a message for people.
    pub fn new(service: ServiceId, kind: ServiceErrorKind, message: impl Into<String>) -> Self {
        ServiceError {
            service,
            kind,
            message: message.into(),
        }
    }

    /// A [`ServiceErrorKind::Unavailable`] failure of `service`; `why` says what is missing (e.g.
    /// the index or the model).
    pub fn unavailable(service: ServiceId, why: impl Into<String>) -> Self {
        ServiceError::new(service, ServiceErrorKind::Unavailable, why)
    }

    /// Whether this is an [`ServiceErrorKind::Unavailable`] failure: the host lacks the service,
    /// and the explorer should fall back (and say so in
    /// [`Response::notes`](crate::Response::notes)).
    pub fn is_unavailable(&self) -> bool {
        self.kind == ServiceErrorKind::Unavailable
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ServiceErrorKind::InvalidArgs => "invalid arguments",
            ServiceErrorKind::NotFound => "not found",
            ServiceErrorKind::Unavailable => "not available",
            ServiceErrorKind::Failed => "failed",
            ServiceErrorKind::Panic => "host panicked",
        };
        write!(f, "service {} {kind}: {}", self.service, self.message)
    }
}

impl std::error::Error for ServiceError {}

/// Why an explorer could not be created or could not answer. The host reports the message with
/// the instance; it never retries on its own.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ExplorerError {
    /// The `create` config is wrong (unknown field, bad value). Names the field.
    InvalidConfig(String),
    /// The request cannot be served (e.g. the oracle without ground truth).
    InvalidRequest(String),
    /// A service the explorer needs failed.
    Service(ServiceError),
    /// Anything else.
    Failed(String),
}

impl ExplorerError {
    /// An [`ExplorerError::Failed`] with this message.
    pub fn failed(message: impl Into<String>) -> Self {
        ExplorerError::Failed(message.into())
    }

    /// The ABI status code for this error.
    pub fn status(&self) -> i32 {
        match self {
            ExplorerError::InvalidConfig(_) | ExplorerError::InvalidRequest(_) => {
                SWEX_ERR_INVALID_INPUT
            }
            ExplorerError::Service(_) | ExplorerError::Failed(_) => SWEX_ERR_FAILED,
        }
    }
}

impl fmt::Display for ExplorerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExplorerError::InvalidConfig(m) => write!(f, "invalid config: {m}"),
            ExplorerError::InvalidRequest(m) => write!(f, "invalid request: {m}"),
            ExplorerError::Service(e) => write!(f, "{e}"),
            ExplorerError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ExplorerError {}

impl From<ServiceError> for ExplorerError {
    fn from(error: ServiceError) -> Self {
        ExplorerError::Service(error)
    }
}
