//! What the API answers: an [`Answer`] (a status and a JSON body) or an [`ApiError`] (a status
//! and `{"error": message}`), each an axum response ([`IntoResponse`]) through
//! [`super::edge::json`]. An operation's [`crate::Error`] becomes an [`ApiError`] by its kind,
//! never by its text.
//!
//! May call: `edge` (the JSON response), the core error type.

use super::edge;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use notabene_core::error::ErrorKind;
use serde_json::Value;

/// A successful API answer (a 404 `{deleted: false}` is one too): status and JSON body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: StatusCode,
    /// The JSON body.
    pub body: Value,
}

impl Answer {
    /// `200` with `body`.
    pub fn ok(body: Value) -> Answer {
        Answer {
            status: StatusCode::OK,
            body,
        }
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        edge::json(self.status, &self.body)
    }
}

/// An API error: its status code and the message of its `{"error": …}` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The status code.
    pub status: StatusCode,
    /// The message.
    pub message: String,
}

impl ApiError {
    /// An error with `status` and `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// A 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 404 `not found`.
    pub fn not_found() -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not found")
    }

    /// A 500 with the failure's message.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// A 500 with the message of the store's (or the book's) error `e`.
    pub fn failed(e: crate::Error) -> ApiError {
        ApiError::internal(e.message())
    }
}

/// An operation's error: its kind is the status code, its field named as the request names it.
impl From<crate::Error> for ApiError {
    fn from(e: crate::Error) -> ApiError {
        let status = match e.kind() {
            ErrorKind::Invalid => StatusCode::BAD_REQUEST,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::Io | ErrorKind::Other => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.naming(str::to_string))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        edge::error(self.status, &self.message)
    }
}
