//! The digest of a guest's answer, which a replay checks its answers against.

use sha2::{Digest as _, Sha256};

use super::codec::Encoder;
use super::op::{Answer, AnswerDigest};
use crate::bindings::ToolResult;
use crate::bindings::agentenv::environment::types as wit;
use crate::bindings::exports::agentenv::environment::env::ContentBlock;

/// The hash a journal digests its answers with (docs/snapshots.md, `answer`): the snapshot
/// file's version tells which.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnswerHash {
    /// SHA-256, the hash of version-2 snapshot files.
    Sha256,
    /// BLAKE3 (32 bytes), the hash of every journal envhost starts and of version-3 files.
    #[default]
    Blake3,
}

/// The digest of `answer` with `hash` (see [`AnswerDigest`]).
pub fn digest(hash: AnswerHash, answer: &Result<Answer, wit::EnvError>) -> AnswerDigest {
    let mut out = Canonical {
        hasher: match hash {
            AnswerHash::Sha256 => Hasher::Sha256(Sha256::new()),
            AnswerHash::Blake3 => Hasher::Blake3(Box::new(blake3::Hasher::new())),
        },
        pending: Vec::new(),
    };
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
    out.flush();
    match out.hasher {
        Hasher::Sha256(sha) => sha.finalize().into(),
        Hasher::Blake3(blake) => blake.finalize().into(),
    }
}

enum Hasher {
    Sha256(Sha256),
    Blake3(Box<blake3::Hasher>),
}

impl Hasher {
    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Sha256(sha) => sha.update(bytes),
            Self::Blake3(blake) => {
                blake.update(bytes);
            }
        }
    }
}

/// The canonical encoding, fed to a hasher with its small parts gathered into pieces of up to
/// [`Canonical::PIECE`] bytes: BLAKE3 hashes many chunks at once only when it is given them at
/// once, and an answer of many small strings (a list's content blocks) would otherwise be
/// hashed a block at a time.
struct Canonical {
    hasher: Hasher,
    /// Encoded bytes not yet given to the hasher.
    pending: Vec<u8>,
}

impl Canonical {
    const PIECE: usize = 64 << 10;

    fn flush(&mut self) {
        self.hasher.update(&self.pending);
        self.pending.clear();
    }
}

impl Encoder for Canonical {
    fn raw(&mut self, bytes: &[u8]) {
        if self.pending.len() + bytes.len() <= Self::PIECE {
            self.pending.extend_from_slice(bytes);
        } else if bytes.len() >= Self::PIECE {
            self.flush();
            self.hasher.update(bytes);
        } else {
            self.flush();
            self.pending.extend_from_slice(bytes);
        }
    }

    fn len(&mut self, len: usize) {
        self.raw(&(len as u64).to_le_bytes());
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
                ContentBlock::Block(json) => {
                    self.u8(2);
                    self.str(json);
                }
            }
        }
        self.opt(result.structured_content.as_deref());
        self.u8(u8::from(result.is_error));
        if let Some(meta) = &result.meta {
            self.u8(1);
            self.str(meta);
        }
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

    fn digest(answer: &Result<Answer, wit::EnvError>) -> AnswerDigest {
        let blake = super::digest(AnswerHash::Blake3, answer);
        assert_ne!(blake, super::digest(AnswerHash::Sha256, answer));
        blake
    }

    /// Both hashes digest the whole canonical encoding, however its pieces are gathered:
    /// one small string, one string larger than a piece, many small strings across pieces.
    #[test]
    fn each_hash_digests_the_canonical_encoding() {
        let string = |out: &mut Vec<u8>, text: &str| {
            out.extend_from_slice(&(text.len() as u64).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        };
        let large = "x".repeat(100_000);
        let blocks: Vec<String> = (0..2_000).map(|i| format!("{i:0>100}")).collect();
        let mut answers = Vec::new();
        for json in ["{}", large.as_str()] {
            let mut encoding = vec![0, 3];
            string(&mut encoding, json);
            answers.push((Ok(Answer::Json(json.into())), encoding));
        }
        let mut encoding = vec![0, 2];
        encoding.extend_from_slice(&(blocks.len() as u64).to_le_bytes());
        for block in &blocks {
            encoding.push(0);
            string(&mut encoding, block);
        }
        encoding.extend_from_slice(&[0, 0]);
        let tool = ToolResult {
            content: blocks.into_iter().map(ContentBlock::Text).collect(),
            structured_content: None,
            is_error: false,
            meta: None,
        };
        answers.push((Ok(Answer::Tool(tool)), encoding));
        for (answer, encoding) in &answers {
            assert_eq!(
                super::digest(AnswerHash::Sha256, answer),
                <[u8; 32]>::from(Sha256::digest(encoding))
            );
            assert_eq!(
                super::digest(AnswerHash::Blake3, answer),
                *blake3::hash(encoding).as_bytes()
            );
        }
    }

    #[test]
    fn digests_tell_answers_apart() {
        let text = |t: &str| {
            Ok(Answer::Tool(ToolResult {
                content: vec![ContentBlock::Text(t.into())],
                structured_content: None,
                is_error: false,
                meta: None,
            }))
        };
        assert_eq!(digest(&text("a")), digest(&text("a")));
        let with = |content: ContentBlock, meta: Option<&str>| {
            Ok(Answer::Tool(ToolResult {
                content: vec![content],
                structured_content: None,
                is_error: false,
                meta: meta.map(Into::into),
            }))
        };
        let block = || ContentBlock::Block(r#"{"type":"text","text":"a"}"#.into());
        assert_ne!(digest(&with(block(), None)), digest(&text("a")));
        assert_ne!(
            digest(&with(ContentBlock::Text("a".into()), Some("{}"))),
            digest(&text("a"))
        );
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
