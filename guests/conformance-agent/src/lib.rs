//! `conformance-agent`: an agent whose prompt's text picks what it does, so that tests can
//! check what the host makes of it.
//!
//! - `complete`: emits `text` "ok", then completes with data `{"n": 1}`;
//! - `fail`: answers err `{details: "asked to fail", retryable: true, code: "asked"}`;
//! - `trap`: emits `text` "before", then panics (a trap);
//! - `spin`: loops without calling an import;
//! - `citation`: emits the extension event `citation` `{"url": "https://example.org"}`, then
//!   completes;
//! - `reserved`: emits an extension event named `completed`;
//! - `bad-json`: emits an extension event whose body is not JSON.

wit_bindgen::generate!({
    path: "../../wit/agent",
    world: "agent",
});

use agentenv::agent::events;
use agentenv::agent::types::{Completion, ExtensionEvent, Failure, Progress, Prompt, Scope};
use exports::agentenv::agent::handler::Guest;

fn extension(name: &str, body: &str) {
    events::emit(&Progress::Extension(ExtensionEvent {
        name: name.into(),
        body: body.into(),
    }));
}

struct Component;

impl Guest for Component {
    fn invoke(_scope: Scope, prompt: Prompt) -> Result<Completion, Failure> {
        match prompt.text.as_str() {
            "fail" => {
                return Err(Failure {
                    details: "asked to fail".into(),
                    retryable: true,
                    code: Some("asked".into()),
                });
            }
            "trap" => {
                events::emit(&Progress::Text("before".into()));
                panic!("asked to trap");
            }
            "spin" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "citation" => extension("citation", r#"{"url": "https://example.org"}"#),
            "reserved" => extension("completed", "{}"),
            "bad-json" => extension("note", "{not json"),
            _ => events::emit(&Progress::Text("ok".into())),
        }
        Ok(Completion {
            data: Some(r#"{"n": 1}"#.into()),
        })
    }
}

export!(Component);
