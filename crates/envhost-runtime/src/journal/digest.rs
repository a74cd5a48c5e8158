//! The digest of a guest's answer, which a replay checks its answers against.

use sha2::{Digest as _, Sha256};

use super::codec::Encoder;
use super::op::{Answer, AnswerDigest};
use crate::bindings::ToolResult;
use crate::bindings::agentenv::environment::types as wit;
use crate::bindings::exports::agentenv::environment::env::ContentBlock;

/// The digest of `answer` (see [`AnswerDigest`]).
pub fn digest(answer: &Result<Answer, wit::EnvError>) -> AnswerDigest {
    let mut out = Canonical(Sha256::new());
    match answer {
        Ok(answer) => {
            out.u8(0);
            match answer {
                Answer::Done => out.u8(0),
                Answer::Parts(parts) => {
                    out.u8(1);
                    out.len(parts.len());
                    parts.iter().for_each(|p| out.part(p));
                }
                Answer::Tool(result) => {
                    out.u8(2);
                    out.tool_result(result);
                }
                Answer::Json(json) => {
                    out.u8(3);
                    out.str(json);
                }
            }
        }
        Err(error) => {
            out.u8(1);
            out.str(&error.code);
            out.str(&error.message);
            out.u8(u8::from(error.retryable));
            out.u8(error.applied as u8);
            out.opt(error.hint.as_deref());
            out.raw(&error.status.to_le_bytes());
        }
    }
    out.0.finalize().into()
}

struct Canonical(Sha256);

impl Encoder for Canonical {
    fn raw(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn len(&mut self, len: usize) {
        self.0.update((len as u64).to_le_bytes());
    }
}

impl Canonical {
    fn tool_result(&mut self, result: &ToolResult) {
        self.len(result.content.len());
        for block in &result.content {
            match block {
                ContentBlock::Text(text) => {
                    self.u8(0);
                    self.str(text);
                }
                ContentBlock::Image(image) => {
                    self.u8(1);
                    self.bytes(&image.data);
                    self.str(&image.mime_type);
                }
            }
        }
        self.opt(result.structured_content.as_deref());
        self.u8(u8::from(result.is_error));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(message: &str) -> wit::EnvError {
        wit::EnvError {
            code: "x".into(),
            message: message.into(),
            retryable: false,
            applied: wit::Applied::No,
            hint: None,
            status: 400,
        }
    }

    #[test]
    fn digests_tell_answers_apart() {
        let text = |t: &str| {
            Ok(Answer::Tool(ToolResult {
                content: vec![ContentBlock::Text(t.into())],
                structured_content: None,
                is_error: false,
            }))
        };
        assert_eq!(digest(&text("a")), digest(&text("a")));
        assert_ne!(digest(&text("a")), digest(&text("b")));
        assert_ne!(
            digest(&Ok(Answer::Json("{}".into()))),
            digest(&Ok(Answer::Done))
        );
        assert_ne!(digest(&Err(error("a"))), digest(&Err(error("b"))));
        assert_ne!(
            digest(&Ok(Answer::Parts(vec![]))),
            digest(&Ok(Answer::Parts(vec![wit::Part::Text(wit::TextPart {
                text: String::new(),
                metadata: None,
            })])))
        );
    }
}
