//! Reading newline-delimited messages with a bound: a line longer than the limit is never held
//! in memory; it is read through and reported as [`Piece::Overlong`] with the id a byte scanner
//! found in it, so the side waiting for it can be told.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::protocol::envelope::IdScanner;

/// One line, or the news that one was too long.
#[derive(Debug)]
pub(super) enum Piece {
    /// A whole line, with its trailing `\n` when it had one.
    Line(Vec<u8>),
    /// A line over the limit, read and discarded.
    Overlong {
        /// The line's top-level `id`, canonical, if the scanner found one.
        id: Option<String>,
        /// Its length in bytes.
        len: usize,
    },
}

/// Reads the next line from `reader`; `None` at end of input.
///
/// # Errors
/// Any read error.
pub(super) async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> std::io::Result<Option<Piece>> {
    let mut line = Vec::new();
    let mut over: Option<IdScanner> = None;
    let mut len = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match over {
                Some(scanner) => Some(Piece::Overlong {
                    id: scanner.finish(),
                    len,
                }),
                None if line.is_empty() => None,
                None => Some(Piece::Line(line)),
            });
        }
        let (take, ends) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let chunk = &available[..take];
        len += take;
        match &mut over {
            Some(scanner) => scanner.feed(chunk),
            None if line.len() + take > limit => {
                let mut scanner = IdScanner::default();
                scanner.feed(&line);
                scanner.feed(chunk);
                line = Vec::new();
                over = Some(scanner);
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(take);
        if ends {
            return Ok(Some(match over {
                Some(scanner) => Piece::Overlong {
                    id: scanner.finish(),
                    len,
                },
                None => Piece::Line(line),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_reported_not_held() {
        let big = format!("{{\"id\":5,\"result\":\"{}\"}}\n", "x".repeat(10_000));
        let input = format!("{{\"id\":1}}\n{big}tail");
        let mut reader = tokio::io::BufReader::with_capacity(64, input.as_bytes());
        let Some(Piece::Line(first)) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("first line");
        };
        assert_eq!(first, b"{\"id\":1}\n");
        let Some(Piece::Overlong { id, len }) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("overlong line");
        };
        assert_eq!((id.as_deref(), len), (Some("5"), big.len()));
        let Some(Piece::Line(tail)) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("last line without newline");
        };
        assert_eq!(tail, b"tail");
        assert!(next_line(&mut reader, 1000).await.unwrap().is_none());
    }
}
