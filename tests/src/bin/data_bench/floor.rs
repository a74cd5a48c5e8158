//! The native floor: what parsing a `data/add` request into typed structs with serde, and
//! printing the `data/get` answer from them, costs a native Rust program on this machine.

use serde::{Deserialize, Serialize};

use envhost::protocol::json::to_python_json;
use envhost_tests::load::procfs::thread_cpu_ns;

/// A channel as the seed and the answer carry it.
#[derive(Deserialize, Serialize)]
struct Channel {
    name: String,
    topic: String,
}

/// A message as the seed and the answer carry it.
#[derive(Deserialize, Serialize)]
struct Message {
    channel: String,
    text: String,
    from: Option<String>,
    to: Option<String>,
}

/// A seed's data object.
#[derive(Deserialize, Serialize)]
struct Payload {
    channels: Vec<Channel>,
    messages: Vec<Message>,
}

/// A data part.
#[derive(Deserialize, Serialize)]
struct DataPart<P> {
    kind: String,
    data: P,
}

/// `data/add`'s params.
#[derive(Deserialize)]
struct AddParams {
    parts: Vec<DataPart<Payload>>,
}

/// A `data/add` request.
#[derive(Deserialize)]
struct AddRequest {
    jsonrpc: String,
    id: u64,
    method: String,
    params: AddParams,
}

/// `data/get`'s result.
#[derive(Serialize)]
struct GetResult<'a> {
    parts: [DataPart<&'a Payload>; 1],
}

/// A `data/get` answer.
#[derive(Serialize)]
struct GetAnswer<'a> {
    jsonrpc: &'static str,
    id: u64,
    result: GetResult<'a>,
}

/// The floor's CPU time per operation, in nanoseconds: one sample per repetition.
pub struct Floor {
    /// Parsing the `data/add` request.
    pub add: Vec<u64>,
    /// Printing the `data/get` answer.
    pub get: Vec<u64>,
    /// The answer printed, to compare with the servers'.
    pub answer: Vec<u8>,
}

/// Parses `request` (a `data/add` request of one data part) and prints its `data/get` answer
/// (Python's `json.dumps` spacing, as the servers answer), `samples` times each, timing each
/// on this thread's CPU clock.
///
/// # Errors
/// When `request` is not such a request.
pub fn measure(request: &[u8], samples: usize) -> anyhow::Result<Floor> {
    let mut floor = Floor {
        add: Vec::with_capacity(samples),
        get: Vec::with_capacity(samples),
        answer: Vec::new(),
    };
    for _ in 0..samples {
        let start = thread_cpu_ns();
        let parsed: AddRequest = serde_json::from_slice(std::hint::black_box(request))?;
        floor.add.push(thread_cpu_ns() - start);
        anyhow::ensure!(
            parsed.jsonrpc == "2.0" && parsed.id == 1 && parsed.method == "data/add",
            "not a data/add request of id 1"
        );
        let payload = &parsed.params.parts[0].data;
        let start = thread_cpu_ns();
        let answer = to_python_json(&GetAnswer {
            jsonrpc: "2.0",
            id: 1,
            result: GetResult {
                parts: [DataPart {
                    kind: "data".into(),
                    data: payload,
                }],
            },
        });
        floor.get.push(thread_cpu_ns() - start);
        floor.answer = std::hint::black_box(answer);
    }
    Ok(floor)
}
