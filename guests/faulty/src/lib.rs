//! A test environment that misbehaves on request, to prove that a guest's fault fails its own
//! call only: `trap` hits `unreachable`, `spin` never returns, `grow` allocates until memory runs
//! out. `echo`, `slow` and the data plane behave, so a test can see the episode serve again afterwards;
//! `data/add` of `{"fault": "trap" | "spin" | "grow"}` misbehaves the same way.

use envhost_sdk::{EnvError, Part, environment};
use serde_json::json;

/// Counts the calls that returned.
#[derive(Default)]
pub struct Faulty {
    calls: u64,
}

/// Misbehaves as `kind` says; returns only for an unknown kind.
fn fault(kind: &str) -> EnvError {
    match kind {
        "trap" => core::arch::wasm32::unreachable(),
        "spin" => {
            let mut x: u64 = 0;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        "grow" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 1 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        other => EnvError::new("unknown_fault", format!("no fault named {other}")),
    }
}

#[environment(name = "faulty")]
impl Faulty {
    #[reset]
    fn reset(&mut self) {
        self.calls = 0;
    }

    #[add_data]
    fn add(&mut self, parts: Vec<Part>) -> Result<(), EnvError> {
        for part in parts {
            if let Part::Data(d) = part
                && let Some(kind) = d.data.get("fault").and_then(|k| k.as_str())
            {
                return Err(fault(kind));
            }
        }
        self.calls += 1;
        Ok(())
    }

    #[get_data]
    fn get(&self) -> Result<Vec<Part>, EnvError> {
        Ok(vec![Part::data(json!({"calls": self.calls}))?])
    }

    /// Answers its text and how many calls have returned so far.
    #[tool]
    fn echo(&mut self, #[arg(description = "The text to send back.")] text: String) -> String {
        self.calls += 1;
        format!("{text} ({} calls)", self.calls)
    }

    /// Works (busily) for `ms` milliseconds, then counts the call.
    #[tool]
    fn slow(&mut self, #[arg(description = "How long to work, in milliseconds.")] ms: u64) -> u64 {
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_millis(ms) {
            std::hint::spin_loop();
        }
        self.calls += 1;
        self.calls
    }

    /// Traps (executes `unreachable`).
    #[tool]
    fn trap(&mut self) -> Result<String, EnvError> {
        Err(fault("trap"))
    }

    /// Spins forever.
    #[tool]
    fn spin(&mut self) -> Result<String, EnvError> {
        Err(fault("spin"))
    }

    /// Allocates memory until none is left.
    #[tool]
    fn grow(&mut self) -> Result<String, EnvError> {
        Err(fault("grow"))
    }
}
