//! `desk_bench`: computers on `guests/desk` measured in-process (`envhost::computer`), no HTTP.
//!
//! ```text
//! desk_bench [--computers 1000] [--calls 200]
//! ```
//!
//! On one computer: `calls` screenshots, then `calls` clicks with `screenshot: true`, each timed
//! on the wall clock (the tool call whole: the guest's drawing, the PNG, its base64). Then
//! `computers` computers, each started and made to take one screenshot, with the process's RSS
//! before and after: the RSS each one adds, and that less its framebuffer (the desk draws one
//! byte a pixel: 1280 × 800 bytes). Prints one Markdown table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use envhost::computer::{Computer, tools};
use envhost::protocol::computer::settings::Settings;
use envhost::runtime::driver::{Driver, Grants};
use envhost::runtime::{Limits, Runtime};
use envhost_tests::guest;
use envhost_tests::load::procfs::proc_memory;
use serde_json::{Map, Value, json};

#[derive(Parser)]
#[command(about = "guests/desk in-process: screenshot and click latency, memory per computer")]
struct Args {
    /// Computers to start, each taking a screenshot.
    #[arg(long, default_value_t = 1000)]
    computers: usize,
    /// Screenshots (and clicks) timed on one computer.
    #[arg(long, default_value_t = 200)]
    calls: usize,
}

/// The desk's framebuffer: one byte a pixel.
const FRAMEBUFFER_BYTES: f64 = 1280.0 * 800.0;

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Percentile `p` (0..=100) of sorted `times`, in ms.
fn percentile(times: &[Duration], p: usize) -> f64 {
    let at = (times.len().saturating_sub(1) * p) / 100;
    times.get(at).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

async fn timed(
    computer: &Computer,
    tool: &str,
    args: &Value,
    calls: usize,
) -> anyhow::Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        let result = tools::call(computer, tool, arguments(args.clone()), "default").await;
        times.push(start.elapsed());
        anyhow::ensure!(!result.is_error, "{tool} failed: {:?}", result.structured());
    }
    times.sort();
    Ok(times)
}

fn rss_kib() -> f64 {
    proc_memory(std::process::id()).map_or(0.0, |m| m.rss as f64)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = Runtime::new()?;
    let bytes = std::fs::read(guest("desk"))?;
    let driver =
        Arc::new(Driver::from_bytes(&runtime, bytes, Limits::default(), &Grants::default()).await?);
    let start = |label: String| {
        let driver = driver.clone();
        async move {
            let instance = driver
                .instantiate(&label)
                .await
                .map_err(|e| anyhow::anyhow!("{e:#}"))?;
            anyhow::Ok(Computer::new(driver, instance, Settings::default()))
        }
    };

    let one = start("desk".into()).await?;
    let shots = timed(&one, "computer_screenshot", &json!({}), args.calls).await?;
    let click = json!({"x": 700, "y": 400, "screenshot": true});
    let clicks = timed(&one, "computer_click", &click, args.calls).await?;
    drop(one);

    let before = rss_kib();
    let mut computers = Vec::with_capacity(args.computers);
    for i in 0..args.computers {
        let computer = start(format!("desk-{i}")).await?;
        let shot = tools::call(&computer, "computer_screenshot", Map::new(), "default").await;
        anyhow::ensure!(!shot.is_error, "screenshot {i} failed");
        computers.push(computer);
    }
    let after = rss_kib();
    let per = (after - before) * 1024.0 / args.computers.max(1) as f64;

    println!("| figure | value |");
    println!("|---|---:|");
    for (name, times) in [
        ("computer_screenshot", &shots),
        ("computer_click, screenshot: true", &clicks),
    ] {
        println!(
            "| {name}, ms: p50 (p10–p90, min–max) | {:.2} ({:.2}–{:.2}, {:.2}–{:.2}) |",
            percentile(times, 50),
            percentile(times, 10),
            percentile(times, 90),
            percentile(times, 0),
            percentile(times, 100)
        );
    }
    println!(
        "| computers, each after one screenshot | {} |",
        args.computers
    );
    println!(
        "| RSS before → after, MiB | {:.0} → {:.0} |",
        before / 1024.0,
        after / 1024.0
    );
    println!("| RSS per computer, KiB | {:.0} |", per / 1024.0);
    println!(
        "| RSS per computer beyond its 1280×800 one-byte framebuffer, KiB | {:.0} |",
        (per - FRAMEBUFFER_BYTES) / 1024.0
    );
    Ok(())
}
