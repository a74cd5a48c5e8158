//! The `envhost` command.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use envhost::runtime::{Limits, Runtime};
use envhost::server::{self, ServeOptions};
use tracing_subscriber::EnvFilter;

/// Serve agent environments, written as WebAssembly components, over the agentenv protocol and
/// MCP.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve one environment at the root, as the Python reference SDK serves it: the card, the
    /// data plane at /agentenv, MCP at /mcp, extensions, tool access and /ready.
    Serve(Serve),
}

#[derive(clap::Args)]
struct Serve {
    /// The environment component (.wasm).
    component: PathBuf,
    /// Address to bind; `::` binds every IPv6 and IPv4 address.
    #[arg(long, env = "MCP_HOST", default_value = "0.0.0.0")]
    host: String,
    /// Port to bind.
    #[arg(long, env = "MCP_PORT", default_value_t = 18765)]
    port: u16,
    /// The card's name (and the `{environment_name}` of tool names); the component's own when
    /// unset or empty.
    #[arg(long, env = "ENVIRONMENT_NAME")]
    name: Option<String>,
    /// A directory `file://` parts of data/add may name files under; repeatable. Default: /data
    /// and the OS temp dir.
    #[arg(long = "data-root", value_name = "DIR")]
    data_roots: Vec<PathBuf>,
    /// The most bytes a file part may resolve to.
    #[arg(long, default_value_t = 64 << 20)]
    max_file_bytes: u64,
    /// The largest request body accepted (413 beyond it).
    #[arg(long, default_value_t = server::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// Linear memory per instance, in MiB.
    #[arg(long, default_value_t = 256)]
    memory_mib: usize,
    /// Guest CPU time per call, in milliseconds, before the call fails.
    #[arg(long, default_value_t = 10_000)]
    cpu_deadline_ms: u64,
}

async fn serve(args: Serve) -> anyhow::Result<()> {
    let runtime = Runtime::new()?;
    let mut options = ServeOptions::new(&args.component);
    options.name = args.name.filter(|n| !n.trim().is_empty());
    options.limits = Limits {
        memory_bytes: args.memory_mib << 20,
        cpu_deadline: Duration::from_millis(args.cpu_deadline_ms),
    };
    options.transfers.max_file_bytes = args.max_file_bytes;
    if !args.data_roots.is_empty() {
        options.transfers.data_roots = args.data_roots;
    }
    options.max_body_bytes = args.max_body_bytes;
    let (router, catalog) = server::app(&runtime, &options)
        .await
        .with_context(|| format!("loading {}", args.component.display()))?;
    release_free_memory();
    tokio::spawn(async {
        let mut every = tokio::time::interval(TRIM_INTERVAL);
        loop {
            every.tick().await;
            release_free_memory();
        }
    });

    let host = args.host.trim_start_matches('[').trim_end_matches(']');
    let listener = tokio::net::TcpListener::bind((host, args.port))
        .await
        .with_context(|| format!("binding {host}:{}", args.port))?;
    let bound = listener.local_addr()?;
    tracing::info!(
        environment = %catalog.description.name,
        tools = catalog.tools.len(),
        "serving on http://{bound} (card /.well-known/agent-env.json, data plane /agentenv, MCP /mcp)"
    );
    server::serve(listener, router, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}

/// How often free allocator memory is handed back to the system while serving.
const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// Hands the allocator's free memory back to the system: compiling a component leaves tens of
/// MiB of freed working memory in glibc's arenas, and bursts of concurrent requests a few more,
/// which would otherwise stay resident.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve(args) => serve(args).await,
    }
}
