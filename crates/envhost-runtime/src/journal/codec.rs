//! The compact encoding of a journal's entries, one after another in a byte buffer: tags and
//! flags as one byte, strings and byte lists as a little-endian `u32` length then the bytes,
//! clock readings as a tag byte and a little-endian `u64`, the answer digest as its 32 bytes.
//! A tool or extension call's context keeps its arguments only when they differ from the
//! call's own (they rarely do). An entry whose guest made requests to its caller has
//! [`EXCHANGES`] set in its op's tag and the answers after its digest: each a count, then tag 0
//! and the result, or tag 1, the error code as a little-endian `i32` and the message.

use envhost_protocol::Caller;

use super::op::{AnswerDigest, Entry, Op};
use crate::bindings::agentenv::environment::types as wit;
use crate::call::{CallContext, ClientError, Exchange};
use crate::capability::wasi::Reading;

/// Bytes of framing, context and digest an entry takes besides its operation's strings, at
/// most in all but rare calls.
const ENTRY_FRAMING: usize = 128;

/// About how many bytes the entry of `op` encodes to: its strings and bytes, and
/// [`ENTRY_FRAMING`]. Room for that is made before an entry is written, so that a large one
/// (a seed of megabytes) is copied into the journal once, not through every size a growing
/// buffer passes.
fn size_hint(op: &Op) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    ENTRY_FRAMING
        + match op {
            Op::Reset | Op::GetData => 0,
            Op::AddData(parts) => parts
                .iter()
                .map(|part| {
                    8 + match part {
                        wit::Part::Text(p) => p.text.len() + opt(&p.metadata),
                        wit::Part::Data(p) => p.data.len() + opt(&p.metadata),
                        wit::Part::File(p) => {
                            let content = match &p.file {
                                wit::FileContent::Bytes(bytes) => bytes.len(),
                                wit::FileContent::Uri(uri) => uri.len(),
                            };
                            content + opt(&p.mime_type) + opt(&p.name) + opt(&p.metadata)
                        }
                    }
                })
                .sum(),
            Op::CallTool { name, arguments } => name.len() + arguments.len(),
            Op::CallExtension { uri, op, request } => uri.len() + op.len() + request.len(),
            Op::CallMcp { method, params } => method.len() + params.len(),
        }
}

/// The bit of an op's tag that says the entry ends with its requests' answers.
const EXCHANGES: u8 = 0x80;

/// Appends one entry to `out`.
pub(crate) fn encode(
    out: &mut Vec<u8>,
    op: &Op,
    context: Option<&CallContext>,
    readings: &[Reading],
    answer: &AnswerDigest,
    exchanges: &[Exchange],
) {
    out.reserve(size_hint(op));
    let start = out.len();
    let mut w = Writer(out);
    match op {
        Op::Reset => w.u8(0),
        Op::AddData(parts) => {
            w.u8(1);
            w.len(parts.len());
            parts.iter().for_each(|p| w.part(p));
        }
        Op::GetData => w.u8(2),
        Op::CallTool { name, arguments } => {
            w.u8(3);
            w.str(name);
            w.str(arguments);
        }
        Op::CallExtension { uri, op, request } => {
            w.u8(4);
            w.str(uri);
            w.str(op);
            w.str(request);
        }
        Op::CallMcp { method, params } => {
            w.u8(5);
            w.str(method);
            w.str(params);
        }
    }
    match context {
        None => w.u8(0),
        Some(c) => {
            let same = op.arguments() == Some(c.arguments.as_str());
            w.u8(if same { 2 } else { 1 });
            w.opt(c.caller.role.as_deref());
            w.opt(c.caller.session.as_deref());
            w.str(&c.tool);
            if !same {
                w.str(&c.arguments);
            }
            w.str(&c.call_id);
        }
    }
    w.len(readings.len());
    for reading in readings {
        let (tag, ns) = match reading {
            Reading::Wall(ns) => (0, ns),
            Reading::Monotonic(ns) => (1, ns),
        };
        w.u8(tag);
        w.raw(&ns.to_le_bytes());
    }
    w.raw(answer);
    if !exchanges.is_empty() {
        w.len(exchanges.len());
        for exchange in exchanges {
            match exchange {
                Ok(result) => {
                    w.u8(0);
                    w.str(result);
                }
                Err(e) => {
                    w.u8(1);
                    w.raw(&e.code.to_le_bytes());
                    w.str(&e.message);
                }
            }
        }
        out[start] |= EXCHANGES;
    }
}

/// Takes one entry off the front of `input`; `None` when it is not a whole entry.
pub(crate) fn decode(input: &mut &[u8]) -> Option<Entry> {
    let mut r = Reader(input);
    let tag = r.u8()?;
    let op = match tag & !EXCHANGES {
        0 => Op::Reset,
        1 => {
            let count = r.len()?;
            Op::AddData((0..count).map(|_| r.part()).collect::<Option<_>>()?)
        }
        2 => Op::GetData,
        3 => Op::CallTool {
            name: r.string()?,
            arguments: r.string()?,
        },
        4 => Op::CallExtension {
            uri: r.string()?,
            op: r.string()?,
            request: r.string()?,
        },
        5 => Op::CallMcp {
            method: r.string()?,
            params: r.string()?,
        },
        _ => return None,
    };
    let context = match r.u8()? {
        0 => None,
        flag @ (1 | 2) => {
            let caller = Caller {
                role: r.opt()?,
                session: r.opt()?,
            };
            let tool = r.string()?;
            let arguments = if flag == 2 {
                op.arguments()?.to_owned()
            } else {
                r.string()?
            };
            Some(CallContext {
                caller,
                tool,
                arguments,
                call_id: r.string()?,
            })
        }
        _ => return None,
    };
    let count = r.len()?;
    let readings = (0..count)
        .map(|_| {
            let tag = r.u8()?;
            let ns = u64::from_le_bytes(r.take(8)?.try_into().ok()?);
            match tag {
                0 => Some(Reading::Wall(ns)),
                1 => Some(Reading::Monotonic(ns)),
                _ => None,
            }
        })
        .collect::<Option<_>>()?;
    let answer = r.take(32)?.try_into().ok()?;
    let exchanges = if tag & EXCHANGES == 0 {
        Vec::new()
    } else {
        let count = r.len()?;
        (0..count)
            .map(|_| match r.u8()? {
                0 => Some(Ok(r.string()?)),
                1 => {
                    let code = i32::from_le_bytes(r.take(4)?.try_into().ok()?);
                    Some(Err(ClientError {
                        code,
                        message: r.string()?,
                    }))
                }
                _ => None,
            })
            .collect::<Option<_>>()?
    };
    Some(Entry {
        op,
        context,
        readings,
        answer,
        exchanges,
    })
}

/// The tag and length-prefixed encoding shared by the journal's buffer and the answer digest
/// (which differ only in the width of lengths).
pub(crate) trait Encoder {
    /// Appends `bytes` as they are.
    fn raw(&mut self, bytes: &[u8]);

    /// Appends a length.
    fn len(&mut self, len: usize);

    fn u8(&mut self, value: u8) {
        self.raw(&[value]);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.len(bytes.len());
        self.raw(bytes);
    }

    fn str(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    fn opt(&mut self, text: Option<&str>) {
        match text {
            None => self.u8(0),
            Some(text) => {
                self.u8(1);
                self.str(text);
            }
        }
    }

    fn part(&mut self, part: &wit::Part) {
        match part {
            wit::Part::Text(p) => {
                self.u8(0);
                self.str(&p.text);
                self.opt(p.metadata.as_deref());
            }
            wit::Part::Data(p) => {
                self.u8(1);
                self.str(&p.data);
                self.opt(p.metadata.as_deref());
            }
            wit::Part::File(p) => {
                self.u8(2);
                match &p.file {
                    wit::FileContent::Bytes(bytes) => {
                        self.u8(0);
                        self.bytes(bytes);
                    }
                    wit::FileContent::Uri(uri) => {
                        self.u8(1);
                        self.str(uri);
                    }
                }
                self.opt(p.mime_type.as_deref());
                self.opt(p.name.as_deref());
                self.opt(p.metadata.as_deref());
            }
        }
    }
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Encoder for Writer<'_> {
    fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    fn len(&mut self, len: usize) {
        self.raw(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
    }
}

struct Reader<'a, 'b>(&'a mut &'b [u8]);

impl<'b> Reader<'_, 'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        *self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn len(&mut self) -> Option<usize> {
        let bytes = self.take(4)?.try_into().ok()?;
        usize::try_from(u32::from_le_bytes(bytes)).ok()
    }

    fn bytes(&mut self) -> Option<Vec<u8>> {
        let len = self.len()?;
        self.take(len).map(<[u8]>::to_vec)
    }

    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?).ok()
    }

    fn opt(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.string().map(Some),
            _ => None,
        }
    }

    fn part(&mut self) -> Option<wit::Part> {
        Some(match self.u8()? {
            0 => wit::Part::Text(wit::TextPart {
                text: self.string()?,
                metadata: self.opt()?,
            }),
            1 => wit::Part::Data(wit::DataPart {
                data: self.string()?,
                metadata: self.opt()?,
            }),
            2 => {
                let file = match self.u8()? {
                    0 => wit::FileContent::Bytes(self.bytes()?),
                    1 => wit::FileContent::Uri(self.string()?),
                    _ => return None,
                };
                wit::Part::File(wit::FilePart {
                    file,
                    mime_type: self.opt()?,
                    name: self.opt()?,
                    metadata: self.opt()?,
                })
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Answer, Journal};

    #[test]
    fn an_entry_fits_in_the_room_made_for_it() {
        let big = "x".repeat(100_000);
        let meta = Some(r#"{"m": 1}"#.to_owned());
        let ops = [
            Op::Reset,
            Op::GetData,
            Op::AddData(vec![
                wit::Part::Text(wit::TextPart {
                    text: big.clone(),
                    metadata: meta.clone(),
                }),
                wit::Part::Data(wit::DataPart {
                    data: format!(r#"{{"a": "{big}"}}"#),
                    metadata: meta.clone(),
                }),
                wit::Part::File(wit::FilePart {
                    file: wit::FileContent::Bytes(big.clone().into_bytes()),
                    mime_type: Some("text/plain".into()),
                    name: Some("a.txt".into()),
                    metadata: meta.clone(),
                }),
                wit::Part::File(wit::FilePart {
                    file: wit::FileContent::Uri(big.clone()),
                    mime_type: None,
                    name: None,
                    metadata: None,
                }),
            ]),
            Op::CallTool {
                name: "slack_send".into(),
                arguments: big.clone(),
            },
            Op::CallExtension {
                uri: "urn:x".into(),
                op: "stats".into(),
                request: big.clone(),
            },
            Op::CallMcp {
                method: "resources/read".into(),
                params: big.clone(),
            },
        ];
        let answer = Journal::default().digest(&Ok(Answer::Done));
        let readings = [Reading::Monotonic(1), Reading::Wall(2)];
        for op in &ops {
            let mut out = Vec::new();
            encode(&mut out, op, None, &readings, &answer, &[]);
            assert!(out.len() <= size_hint(op), "{}", op.describe());
            assert!(
                out.len() + ENTRY_FRAMING > size_hint(op),
                "{}",
                op.describe()
            );
            assert!(decode(&mut out.as_slice()).is_some());
        }
    }

    #[test]
    fn an_entry_keeps_its_requests_answers_and_one_without_any_is_unchanged() {
        let op = Op::CallTool {
            name: "ask".into(),
            arguments: "{}".into(),
        };
        let answer = [5; 32];
        let asked = [
            Ok(r#"{"action":"accept"}"#.to_owned()),
            Err(ClientError {
                code: -32601,
                message: "no".into(),
            }),
        ];
        let (mut plain, mut with) = (Vec::new(), Vec::new());
        encode(&mut plain, &op, None, &[], &answer, &[]);
        encode(&mut with, &op, None, &[], &answer, &asked);
        assert_eq!(plain[0], 3, "the tag of a tool call without requests");
        assert_eq!(with[0], 3 | EXCHANGES);
        let (mut a, mut b) = (plain.as_slice(), with.as_slice());
        assert!(decode(&mut a).unwrap().exchanges.is_empty());
        let entry = decode(&mut b).unwrap();
        assert_eq!(entry.exchanges, asked);
        assert!(matches!(entry.op, Op::CallTool { .. }));
        assert!(a.is_empty() && b.is_empty());
    }
}
