//! `mcp-consent questions …`: answering agent-audience questions from a script or a terminal,
//! through the same API (and so the same validation) as the pages.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::{Value, json};

use crate::client::{ClientError, ServiceClient};
use crate::domain::{Action, Kind, State};
use crate::protocol::invisible::{escaped, escaped_json};
use crate::wire::{Answer, QuestionList, Summary};

/// The `questions` subcommands.
#[derive(Debug, Subcommand)]
pub enum QuestionsCommand {
    /// List questions (pending ones by default), oldest first.
    List {
        /// Every state, not only pending.
        #[arg(long)]
        all: bool,
        /// Print the API's JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one question: what the server asked, and its response once decided.
    Show {
        /// Question id.
        id: String,
    },
    /// Accept a question with content (forms) or a result (sampling).
    Answer {
        /// Question id.
        id: String,
        /// Form content as JSON, e.g. '{"name":"Ada"}' (omitted fields with a default get it).
        #[arg(long, conflicts_with_all = ["result", "file"])]
        content: Option<String>,
        /// Sampling `CreateMessageResult` as JSON.
        #[arg(long, conflicts_with = "file")]
        result: Option<String>,
        /// Read the content/result JSON from this file (`-` for stdin).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Do not ask for confirmation (for scripts; no prompt is shown when stdin is not a
        /// terminal anyway).
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Decline a question (for sampling the server gets error -1).
    Decline {
        /// Question id.
        id: String,
    },
    /// Cancel a question (dismissed without a choice; for sampling the server gets error -1).
    Cancel {
        /// Question id.
        id: String,
    },
}

/// Why a `questions` command failed.
#[derive(Debug, thiserror::Error)]
pub enum QuestionsError {
    /// The service refused or could not be reached.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The given content or result is not JSON.
    #[error("{what} is not valid JSON")]
    InvalidJson {
        /// Where it came from (`--content`, `--result`, `the file`).
        what: &'static str,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The `--file` could not be read.
    #[error("cannot read {}", .path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A sampling question was to be accepted without a result.
    #[error("give --result JSON (or --file)")]
    NoResult,
    /// Writing to the terminal failed.
    #[error("cannot write output")]
    Io(#[from] std::io::Error),
    /// The person answered "no" at the prompt.
    #[error("not sent")]
    NotConfirmed,
    /// A value could not be printed as JSON.
    #[error("cannot print JSON")]
    Json(#[from] serde_json::Error),
}

/// `v` as pretty JSON for the terminal: every invisible character a server chose escaped
/// ([`escaped_json`]), the value unchanged.
fn pretty(v: &impl serde::Serialize) -> Result<String, QuestionsError> {
    Ok(escaped_json(&serde_json::to_string_pretty(v)?).into_owned())
}

fn read_json(text: &str, what: &'static str) -> Result<Value, QuestionsError> {
    serde_json::from_str(text).map_err(|source| QuestionsError::InvalidJson { what, source })
}

/// Runs one `questions` subcommand, writing to `out`; prompts on the terminal when needed.
///
/// # Errors
/// [`QuestionsError`]: the service's refusal (422 field errors, 409, 403, 404), bad input,
/// or a "no" at the prompt.
pub async fn run(
    action: QuestionsCommand,
    client: &ServiceClient,
    out: &mut impl Write,
) -> Result<(), QuestionsError> {
    match action {
        QuestionsCommand::List { all, json } => {
            let questions = client
                .list_questions(if all { None } else { Some(State::Pending) })
                .await?;
            if json {
                let list = QuestionList { questions };
                writeln!(out, "{}", pretty(&list)?)?;
            } else {
                write_table(&questions, out)?;
            }
        }
        QuestionsCommand::Show { id } => {
            let detail = client.question(&id).await?;
            writeln!(out, "{}", pretty(&detail)?)?;
        }
        QuestionsCommand::Answer {
            id,
            content,
            result,
            file,
            yes,
        } => {
            let from_file = read_answer_file(file.as_deref())?;
            let question = client.question(&id).await?;
            let is_sampling = question.summary.kind == Kind::Sampling;
            let answer = acceptance(is_sampling, content, result, from_file)?;
            let response = client.preview(&id, &answer).await?;
            let server = escaped(&question.summary.server, false);
            writeln!(out, "{server} will receive:\n{}", pretty(&response)?)?;
            if !yes && std::io::stdin().is_terminal() {
                confirm_send(out)?;
            }
            let state = client.answer(&id, &answer).await?;
            writeln!(out, "sent; the question is {state}")?;
        }
        QuestionsCommand::Decline { id } => {
            let state = client.answer(&id, &refusal(Action::Decline)).await?;
            writeln!(out, "sent; the question is {state}")?;
        }
        QuestionsCommand::Cancel { id } => {
            let state = client.answer(&id, &refusal(Action::Cancel)).await?;
            writeln!(out, "sent; the question is {state}")?;
        }
    }
    Ok(())
}

/// The questions as a table, one a line. The server and tool names are the server's and the
/// host's text: each invisible character is escaped (`\u{1b}`), so no terminal escape runs and
/// every row stays one line, its columns aligned.
fn write_table(questions: &[Summary], out: &mut impl Write) -> Result<(), QuestionsError> {
    if questions.is_empty() {
        writeln!(out, "no questions")?;
    }
    for q in questions {
        writeln!(
            out,
            "{}  {:<8} {:<9} {:<20} {:<20} expires {}",
            q.id,
            q.kind.as_str(),
            q.state.as_str(),
            escaped(&q.server, false),
            escaped(q.tool.as_deref().unwrap_or("-"), false),
            q.expires_at
        )?;
    }
    Ok(())
}

/// The text of `--file`: one line from stdin for `-`, else the file's contents.
fn read_answer_file(file: Option<&Path>) -> Result<Option<String>, QuestionsError> {
    match file {
        Some(path) if path.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::stdin().lock().read_line(&mut text)?;
            Ok(Some(text))
        }
        Some(path) => Ok(Some(std::fs::read_to_string(path).map_err(|source| {
            QuestionsError::ReadFile {
                path: path.to_owned(),
                source,
            }
        })?)),
        None => Ok(None),
    }
}

/// The accepting answer from `--content`, `--result` or the file (a result for a sampling
/// question, content otherwise); a form with nothing given is accepted with empty content.
fn acceptance(
    is_sampling: bool,
    content: Option<String>,
    result: Option<String>,
    from_file: Option<String>,
) -> Result<Answer, QuestionsError> {
    let accept = |content: Option<Value>, result: Option<Value>| Answer {
        action: Action::Accept,
        content,
        result,
        arguments: None,
        grant: None,
    };
    Ok(match (content, result, from_file) {
        (Some(c), _, _) => accept(Some(read_json(&c, "--content")?), None),
        (_, Some(r), _) => accept(None, Some(read_json(&r, "--result")?)),
        (_, _, Some(text)) if is_sampling => accept(None, Some(read_json(&text, "the file")?)),
        (_, _, Some(text)) => accept(Some(read_json(&text, "the file")?), None),
        (None, None, None) if is_sampling => return Err(QuestionsError::NoResult),
        (None, None, None) => accept(Some(json!({})), None),
    })
}

/// Asks on the terminal whether to send; anything but yes is [`QuestionsError::NotConfirmed`].
fn confirm_send(out: &mut impl Write) -> Result<(), QuestionsError> {
    write!(out, "Send this? [y/N] ")?;
    out.flush()?;
    let mut reply = String::new();
    std::io::stdin().lock().read_line(&mut reply)?;
    if matches!(reply.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(QuestionsError::NotConfirmed)
    }
}

/// A decline or cancel: no content, no result.
fn refusal(action: Action) -> Answer {
    Answer {
        action,
        content: None,
        result: None,
        arguments: None,
        grant: None,
    }
}
