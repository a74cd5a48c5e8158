//! The `envhost` command: see [`envhost::cli`].

/// The allocator: mimalloc (without transparent huge pages, which kept 30 MiB more resident at
/// idle) rather than glibc's. Spread over 1,000 episodes (1,000 connections, sessions, stores and
/// guest memories), glibc's allocator took 6% more server CPU per tool call (124 against 116 µs,
/// medians of 6 interleaved rounds; BENCHMARKS.md "Many episodes"), its malloc_consolidate
/// running on most requests.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    envhost::cli::run(std::env::args_os(), envhost::cli::Process::Own).into()
}
