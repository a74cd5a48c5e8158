//! Server-sent events: the `message` events of an answer's event stream.

use std::borrow::Cow;

/// The `data` of each SSE event named `message` (or unnamed) with non-blank data, multi-line data
/// joined with `\n` (the SSE rules the reference client follows).
pub struct SseMessages<'a> {
    /// What is left of the stream.
    rest: &'a [u8],
}

impl<'a> SseMessages<'a> {
    /// The message events of `stream`.
    pub fn new(stream: &'a [u8]) -> Self {
        Self { rest: stream }
    }

    /// The next line, without its end (`\r\n`, `\n` or `\r`); `None` at the end of the stream.
    fn line(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let end = self
            .rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(self.rest.len());
        let line = &self.rest[..end];
        let skip = match self.rest.get(end..end + 2) {
            Some(b"\r\n") => 2,
            _ => usize::from(end < self.rest.len()),
        };
        self.rest = &self.rest[end + skip..];
        Some(line)
    }
}

impl<'a> Iterator for SseMessages<'a> {
    /// The data, borrowed from the stream unless it spans several lines.
    type Item = Cow<'a, [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let mut data: Option<Cow<'a, [u8]>> = None;
            let mut is_message = true;
            // One event: lines up to a blank line or the end of the stream.
            let mut saw_line = false;
            while let Some(line) = self.line() {
                if line.is_empty() {
                    break;
                }
                saw_line = true;
                let (field, value) = sse_field(line);
                match field {
                    b"event" => is_message = value == b"message",
                    b"data" => match data.as_mut() {
                        Some(joined) => {
                            let joined = joined.to_mut();
                            joined.push(b'\n');
                            joined.extend_from_slice(value);
                        }
                        None => data = Some(Cow::Borrowed(value)),
                    },
                    _ => {}
                }
            }
            if !saw_line && self.rest.is_empty() {
                return None;
            }
            if let Some(data) = data.filter(|d| is_message && !d.trim_ascii().is_empty()) {
                return Some(data);
            }
        }
    }
}

/// An SSE line's field name and value (one leading space of the value dropped).
fn sse_field(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, b""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages of an SSE stream, as text.
    fn messages(stream: &str) -> Vec<String> {
        SseMessages::new(stream.as_bytes())
            .map(|d| String::from_utf8(d.into_owned()).unwrap())
            .collect()
    }

    #[test]
    fn sse_reads_message_events_only() {
        let stream = "event: message\r\ndata: {\"a\":1}\r\n\r\nevent: other\ndata: x\n\n: comment\ndata:  two\ndata:lines\n\nid: 3\n\n";
        assert_eq!(messages(stream), ["{\"a\":1}", " two\nlines"]);
        assert_eq!(messages("data: last"), ["last"]);
        assert!(messages("").is_empty());
    }
}
