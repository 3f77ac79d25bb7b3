//! `mcp-consent passwd`: makes the argon2id hash of a login passphrase.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

use clap::Args;

use crate::auth::passphrase::{self, PassphraseError};
use crate::paths::PathError;

/// Shortest passphrase `passwd` accepts, in characters.
const MIN_PASSPHRASE_CHARS: usize = 8;

/// `mcp-consent passwd …`.
#[derive(Debug, Args)]
pub struct PasswdArgs {
    /// Write the hash to this file instead of printing it.
    #[arg(long)]
    output: Option<PathBuf>,
}

/// Why no hash was made or written.
#[derive(Debug, thiserror::Error)]
pub enum PasswdError {
    /// The terminal or stdin could not be read.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// The two passphrases typed at the terminal differ.
    #[error("the two passphrases differ")]
    Differ,
    /// The passphrase is shorter than [`MIN_PASSPHRASE_CHARS`].
    #[error("use at least {MIN_PASSPHRASE_CHARS} characters")]
    TooShort,
    /// Hashing failed.
    #[error(transparent)]
    Hash(#[from] PassphraseError),
    /// The output file's directory could not be created.
    #[error("cannot create {}", .path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The output file could not be written.
    #[error(transparent)]
    Write(#[from] PathError),
}

/// Reads the passphrase (terminal: twice, without echo; otherwise one line of stdin), hashes
/// it and prints the hash or writes it to `--output`.
///
/// # Errors
/// [`PasswdError`].
pub fn run(args: PasswdArgs) -> Result<(), PasswdError> {
    let passphrase = if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("New passphrase: ")?;
        let again = rpassword::prompt_password("Again: ")?;
        if first != again {
            return Err(PasswdError::Differ);
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    };
    if passphrase.chars().count() < MIN_PASSPHRASE_CHARS {
        return Err(PasswdError::TooShort);
    }
    let hash = passphrase::hash(&passphrase)?;
    match args.output {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|source| PasswdError::CreateDir {
                        path: dir.to_path_buf(),
                        source,
                    })?;
            }
            crate::paths::write_private(&path, &format!("{hash}\n"))?;
            println!(
                "wrote {}; set passphrase_hash_file = {:?} in config.toml",
                path.display(),
                path
            );
        }
        None => println!("{hash}"),
    }
    Ok(())
}
