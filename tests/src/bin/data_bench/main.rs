//! `data_bench`: the episode data path (`data/add`, `data/get` and a large read tool) measured
//! on agentenv servers serving the slack environment, in one run, against a native floor.
//!
//! ```text
//! data_bench --target reference=http://127.0.0.1:8001@PID --target rust=http://127.0.0.1:8002@PID
//!            [--sizes 1,200,2000,20000] [--rounds 5] [--json]
//! ```
//!
//! For each size N, the seed is 20 channels and N messages of about 100 bytes, every one
//! addressed to role `reader` ([`seed`]). On each target, each sample is: `data/reset`
//! (not measured), then `data/add` of the seed, `data/get`, and `slack_list_inbox` over MCP
//! from a session of role `reader` (answering the N messages), each measured as the server's
//! CPU time around the call (its process CPU clock, every thread, nanoseconds, each reading
//! taken once no thread of the server runs) and as the call's wall time on this client. Sizes below 2,000 take four times the samples. The native
//! floor ([`floor`]) parses the same `data/add` bytes into typed structs and prints the same
//! `data/get` answer, timed on this thread's CPU clock; the bench checks that its answer is
//! byte for byte each server's.
//!
//! It prints one Markdown table per operation: the median server CPU per call in ms with the
//! min–max, the ratio to the first target (the reference), and the calls/s a single client gets
//! (1 / median wall time); then, with `--json`, the raw figures as one JSON line.

mod floor;
mod seed;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::Parser;
use http::Method;
use serde::Serialize;
use serde_json::json;

use envhost_tests::load::conn::{Conn, Target, require_success};
use envhost_tests::load::data_plane::{fetch_card, reset};
use envhost_tests::load::mcp::{Session, ToolOutcome};
use envhost_tests::load::measured::{MeasuredServer, median};

/// A tool call's longest wait.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Parser)]
#[command(
    about = "data/add, data/get and slack_list_inbox: server CPU per call, against a native floor"
)]
struct Args {
    /// A server: NAME=URL@PID (the first is the one the others are compared with).
    #[arg(long = "target", required = true)]
    targets: Vec<String>,
    /// The seed sizes, in messages.
    #[arg(long, value_delimiter = ',', default_value = "1,200,2000,20000")]
    sizes: Vec<usize>,
    /// Samples per size of 2,000 messages or more (four times as many below).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Also print the raw figures as one JSON line.
    #[arg(long)]
    json: bool,
}

/// The operations measured.
const OPERATIONS: [&str; 3] = ["data/add", "data/get", "slack_list_inbox"];

/// The samples of one operation at one size on one server (or the floor).
#[derive(Default, Serialize)]
struct Samples {
    /// Server CPU per call, nanoseconds.
    cpu_ns: Vec<u64>,
    /// Wall time per call on the client, nanoseconds.
    wall_ns: Vec<u64>,
}

/// Every figure: `[operation][size][target]`, the floor last.
#[derive(Serialize)]
struct Figures {
    targets: Vec<String>,
    sizes: Vec<usize>,
    samples: Vec<Vec<Vec<Samples>>>,
}

/// Runs `call`, adding the server's CPU time and the wall time it took to `samples`.
async fn timed<T>(
    server: &MeasuredServer,
    samples: &mut Samples,
    call: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let (cpu0, wall0) = (server.cpu_ns()?, Instant::now());
    let answer = call.await?;
    let wall = u64::try_from(wall0.elapsed().as_nanos()).unwrap_or(u64::MAX);
    samples.cpu_ns.push(server.cpu_ns()?.saturating_sub(cpu0));
    samples.wall_ns.push(wall);
    Ok(answer)
}

/// POSTs `body` to the data plane and answers the body of a success.
async fn data_call(conn: &mut Conn, target: &Target, body: &[u8]) -> anyhow::Result<Bytes> {
    let response = conn
        .exchange(
            target,
            Method::POST,
            "/agentenv",
            Bytes::copy_from_slice(body),
        )
        .await?;
    require_success(&response)?;
    let answer = response.into_body();
    if !is_result(&answer) {
        bail!(
            "the data plane answered {}",
            String::from_utf8_lossy(&answer[..answer.len().min(300)])
        );
    }
    Ok(answer)
}

/// Whether a JSON-RPC answer's body is a result (not an error).
fn is_result(body: &[u8]) -> bool {
    body.windows(9).any(|w| w == b"\"result\":")
}

/// Measures every operation at `size` on `server`, `samples` times; answers the last
/// `data/get` answer's bytes.
async fn measure(
    server: &MeasuredServer,
    size: usize,
    samples: usize,
    add: &[u8],
    into: &mut [Samples; 3],
) -> anyhow::Result<Bytes> {
    let mut conn = Conn::open(&server.target).await?;
    let card = fetch_card(&mut conn, &server.target).await?;
    let uri = server.target.uri(card.mcp_path())?;
    let mut session = Session::open(server.target.clone(), uri, seed::READER.into()).await?;
    let inbox = format!("{}_list_inbox", card.name);
    let mut last = Bytes::new();
    for _ in 0..samples {
        reset(&mut conn, &server.target).await?;
        let [adds, gets, lists] = &mut *into;
        timed(server, adds, data_call(&mut conn, &server.target, add)).await?;
        last = timed(
            server,
            gets,
            data_call(&mut conn, &server.target, seed::get_request()),
        )
        .await?;
        let outcome = timed(
            server,
            lists,
            session.call(&inbox, &json!({}), CALL_TIMEOUT),
        )
        .await?;
        if outcome != ToolOutcome::Ok {
            bail!("{inbox} failed on {} at {size} messages", server.name);
        }
    }
    session.close().await;
    reset(&mut conn, &server.target).await?;
    Ok(last)
}

fn ms(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

/// The Markdown tables.
fn print_tables(figures: &Figures) {
    for (o, operation) in OPERATIONS.iter().enumerate() {
        println!(
            "\n### {operation}: server CPU per call, ms (median, min–max); calls/s of one client\n"
        );
        let mut header = String::from("| messages |");
        let mut rule = String::from("|---:|");
        for (t, name) in figures.targets.iter().enumerate() {
            header.push_str(&format!(" {name} |"));
            rule.push_str("---:|");
            if t > 0 && t + 1 < figures.targets.len() {
                header.push_str(&format!(" {} ÷ {name} |", figures.targets[0]));
                rule.push_str("---:|");
            }
        }
        println!("{header}\n{rule}");
        for (s, size) in figures.sizes.iter().enumerate() {
            let row = &figures.samples[o][s];
            let mut line = format!("| {size} |");
            let reference = median(&row[0].cpu_ns);
            for (t, samples) in row.iter().enumerate() {
                if samples.cpu_ns.is_empty() {
                    line.push_str(" – |");
                } else {
                    let m = median(&samples.cpu_ns);
                    let (lo, hi) = (samples.cpu_ns.iter().min(), samples.cpu_ns.iter().max());
                    let rate = match median(&samples.wall_ns) {
                        0 => String::new(),
                        wall => format!(", {:.0}/s", 1e9 / wall as f64),
                    };
                    line.push_str(&format!(
                        " {} ({}–{}){rate} |",
                        ms(m),
                        ms(*lo.unwrap_or(&0)),
                        ms(*hi.unwrap_or(&0))
                    ));
                }
                if t > 0 && t + 1 < row.len() {
                    let m = median(&samples.cpu_ns);
                    if m > 0 && reference > 0 {
                        line.push_str(&format!(" {:.1}× |", reference as f64 / m as f64));
                    } else {
                        line.push_str(" – |");
                    }
                }
            }
            println!("{line}");
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let servers: Vec<MeasuredServer> = args
        .targets
        .iter()
        .map(|t| MeasuredServer::parse(t))
        .collect::<Result<_, _>>()?;
    let mut figures = Figures {
        targets: servers
            .iter()
            .map(|s| s.name.clone())
            .chain(["native floor".into()])
            .collect(),
        sizes: args.sizes.clone(),
        samples: OPERATIONS.iter().map(|_| Vec::new()).collect(),
    };
    for &size in &args.sizes {
        let samples = if size >= 2000 {
            args.rounds
        } else {
            args.rounds * 4
        };
        let add = seed::add_request(size);
        eprintln!(
            "[data_bench] {size} messages: {} KiB per data/add, {samples} samples",
            add.len() / 1024
        );
        let mut row: Vec<[Samples; 3]> = Vec::new();
        let mut answers = Vec::new();
        for server in &servers {
            let mut into = <[Samples; 3]>::default();
            let answer = measure(server, size, samples, &add, &mut into)
                .await
                .with_context(|| format!("{} at {size} messages", server.name))?;
            answers.push((server.name.as_str(), answer));
            row.push(into);
        }
        let floor = floor::measure(&add, samples.max(20))?;
        for (name, answer) in &answers {
            if answer[..] != floor.answer[..] {
                eprintln!(
                    "[data_bench] {name}'s data/get answer differs from the floor's at {size} messages"
                );
            }
        }
        let floor_samples = [
            Samples {
                cpu_ns: floor.add,
                wall_ns: Vec::new(),
            },
            Samples {
                cpu_ns: floor.get,
                wall_ns: Vec::new(),
            },
            Samples::default(),
        ];
        row.push(floor_samples);
        for (o, by_operation) in figures.samples.iter_mut().enumerate() {
            by_operation.push(
                row.iter_mut()
                    .map(|samples| std::mem::take(&mut samples[o]))
                    .collect(),
            );
        }
    }
    print_tables(&figures);
    if args.json {
        println!("{}", serde_json::to_string(&figures)?);
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("data_bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}
