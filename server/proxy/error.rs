//! The errors that stop the proxy.

use super::http::HttpError;
use super::upstream::StartError;

/// Errors that stop the proxy.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The stdio server could not be started.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The remote server's transport could not be set up (`--url`).
    #[error("cannot use the remote server")]
    Remote(#[from] HttpError),
    /// Reading or writing a stream failed.
    #[error("stdio failed")]
    Io(#[from] std::io::Error),
}
