//! A test environment that misbehaves on request, to prove that a guest's fault fails its own
//! call only: `trap` hits `unreachable`, `spin` never returns, `grow` allocates until memory runs
//! out. `fill` and `scan` write and look for a pattern across linear memory, to prove that a new
//! instance never sees an old one's bytes. `observe` answers what the guest sees of random and
//! the clocks, to prove replays exact. `echo`, `slow` and the data plane behave, so a test can see the episode serve again afterwards;
//! `data/add` of `{"fault": "trap" | "spin" | "grow"}` misbehaves the same way, and of `{"fault":
//! "panic"}` panics (its message written to stderr, then a trap).

use envhost_sdk::{EnvError, Part, environment};
use serde_json::json;

/// Counts the calls that returned, and keeps what `fill` wrote.
#[derive(Default)]
pub struct Faulty {
    calls: u64,
    filled: Vec<Vec<u8>>,
}

/// The size of a page `scan` counts.
const PAGE: usize = 4096;

/// The 4 KiB-aligned pages of this instance's whole linear memory in which every byte is `byte`.
fn pages_of(byte: u8) -> u64 {
    let end = core::arch::wasm32::memory_size(0) * 65536;
    let mut pages = 0;
    for start in (PAGE..end).step_by(PAGE) {
        // SAFETY: every address below `memory_size` is readable linear memory of this instance.
        let page = unsafe { core::slice::from_raw_parts(start as *const u8, PAGE) };
        if page.iter().all(|b| std::hint::black_box(*b) == byte) {
            pages += 1;
        }
    }
    pages
}

/// Misbehaves as `kind` says; returns only for an unknown kind.
fn fault(kind: &str) -> EnvError {
    match kind {
        "trap" => core::arch::wasm32::unreachable(),
        "panic" => panic!("the faulty guest panics on request"),
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
                && let Some(kind) = d.data.to_map().get("fault").and_then(|k| k.as_str())
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

    /// What the guest observes of the world: a hash keyed by WASI random (a new `RandomState`
    /// each call), the wall clock and the monotonic clock, in nanoseconds.
    #[tool]
    fn observe(&mut self) -> serde_json::Value {
        use std::hash::BuildHasher;
        self.calls += 1;
        let keyed = std::collections::hash_map::RandomState::new().hash_one(self.calls);
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let started = std::time::Instant::now();
        json!({
            "random": keyed.to_string(),
            "wall_ns": wall.to_string(),
            "monotonic_ns": started.elapsed().as_nanos().to_string(),
            "calls": self.calls,
        })
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

    /// Writes `mib` MiB of memory full of `byte`, and keeps it.
    #[tool]
    fn fill(
        &mut self,
        #[arg(description = "The byte to write.")] byte: u8,
        #[arg(description = "How many MiB to write.")] mib: u32,
    ) -> usize {
        self.filled.push(vec![byte; (mib as usize) << 20]);
        self.filled.iter().map(Vec::len).sum()
    }

    /// Counts the 4 KiB pages of the instance's whole linear memory that hold nothing but `byte`.
    #[tool]
    fn scan(&self, #[arg(description = "The byte to look for.")] byte: u8) -> u64 {
        pages_of(byte)
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
