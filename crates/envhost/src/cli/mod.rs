//! The `envhost` command (serve.md): its arguments, and serving what they name. The `envhost`
//! binary and the Python package's `envhost` script both run [`run`].

mod access;
mod agents;
mod computer;
mod config;
mod memory;
mod new;
mod refusal;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::server;
use crate::transfers::{FetchPolicy, TransferConfig};
use crate::{Host, HostConfig};
use anyhow::Context as _;
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use config::{File, FileDriver, Overrides, command_line_environment};

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
    /// Serve environments: the first one's default episode at the root, as the Python reference
    /// SDK serves its environment (card, data plane at /agentenv, MCP at /mcp, extensions, tool
    /// access, /ready); more episodes of any of them created with POST /episodes and served under
    /// /episodes/{id}/; metrics at /metrics. With --driver, a computer driver instead.
    Serve(Box<Serve>),
    /// Create an environment with one tool in Rust, Python or JavaScript, with a build script,
    /// and print the commands that build and serve it.
    New(new::New),
}

#[derive(clap::Args)]
struct Serve {
    /// Environment components: `NAME=PATH.wasm`, or `PATH.wasm` named after its file.
    environments: Vec<String>,
    /// Serve this computer driver component (`agentenv:computer`) instead of environments, as
    /// the reference serves a driver; `AGENTENV_COMPUTER_SETTINGS` holds its settings.
    #[arg(long, value_name = "PATH.wasm", conflicts_with_all = ["environments", "config"])]
    driver: Option<PathBuf>,
    /// The X display a driver's `x11` capability connects to (e.g. `:99`); without it, a
    /// driver that imports `x11` is refused.
    #[arg(long, value_name = "DISPLAY", requires = "driver")]
    display: Option<String>,
    /// Let the driver's callers run commands (`computer-exec/v1`) as this server's user, in the
    /// --home directory (else $HOME).
    #[arg(long, requires = "driver")]
    exec: bool,
    /// The session user's home for a driver: data/add writes files under it, data/get exports
    /// its data paths, commands run in it.
    #[arg(long, value_name = "DIR", requires = "driver")]
    home: Option<PathBuf>,
    /// An agent component served at `/agents/NAME/invoke`, bound to the first environment, and
    /// deployable as agentenv A2A agents (`POST /agents/NAME/deployments`): `NAME=PATH.wasm`;
    /// repeatable.
    #[arg(
        long = "agent",
        value_name = "NAME=PATH.wasm",
        conflicts_with = "driver"
    )]
    agents: Vec<String>,
    /// The agents' OpenAI-compatible Chat Completions endpoint, e.g. `http://127.0.0.1:8000/v1`
    /// [default: $OPENAI_BASE_URL, else $LITELLM_BASE_URL]; the key comes from $OPENAI_API_KEY
    /// (else $LITELLM_API_KEY).
    #[arg(long, value_name = "URL")]
    model_url: Option<String>,
    /// The model name agents ask the endpoint for.
    #[arg(long, value_name = "NAME", default_value = "default")]
    model: String,
    /// Keep session histories as JSON Lines files in DIR, which another envhost can share
    /// [default: in memory].
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    /// Seconds between the `: ping` frames of a quiet invoke stream.
    #[arg(long, default_value_t = 30)]
    agent_heartbeat_s: u64,
    /// The most agent turns running at once; beyond it an invoke answers `failed{code:
    /// "host_busy", retryable: true}`.
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: u32,
    /// A TOML file of environments and their settings (see the README); its environments come
    /// before the command line's.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to bind; `::` binds every IPv6 and IPv4 address [default: 0.0.0.0 with an
    /// operator token, else 127.0.0.1]. Without a token, an address other than loopback needs
    /// --insecure-no-auth.
    #[arg(long, env = "MCP_HOST")]
    host: Option<String>,
    /// A file holding the operator token, which every route then requires (`Authorization:
    /// Bearer TOKEN`) but `/ready`, the agents' URLs `/agent/{id}/{secret}/` and the
    /// deployments' URLs `/deployments/{id}/{secret}/` [default:
    /// $ENVHOST_CONTROL_TOKEN].
    #[arg(long, value_name = "PATH")]
    control_token_file: Option<PathBuf>,
    /// Serve every route to every caller on an address other than loopback, without an
    /// operator token: whoever reaches the port controls every episode.
    #[arg(long)]
    insecure_no_auth: bool,
    /// Let fetched file parts reach these hosts or addresses in spite of a less specific deny
    /// rule: a network (10.0.0.0/8), an address, a host name or *.domain; repeatable.
    #[arg(long = "fetch-allow", value_name = "RULE")]
    fetch_allow: Vec<String>,
    /// Keep fetched file parts from these hosts or addresses (as --fetch-allow), besides the
    /// built-in denial of link-local and cloud-metadata addresses; repeatable.
    #[arg(long = "fetch-deny", value_name = "RULE")]
    fetch_deny: Vec<String>,
    /// Answer only requests whose Host header, and Origin header when sent, name one of these
    /// hosts (DNS-rebinding protection; 421 or 403 otherwise): host, host:port or host:*, a host
    /// without a port allowing any; comma-separated or repeated, e.g.
    /// localhost,127.0.0.1,[::1]. Default: any host, as the reference.
    #[arg(long = "allowed-hosts", value_name = "HOSTS")]
    allowed_hosts: Vec<String>,
    /// A PEM file of certificate authorities that `https` requests (fetched file parts, object
    /// grants, agents' MCP servers) trust besides the system's; repeatable.
    #[arg(long = "ca-file", value_name = "PATH")]
    ca_files: Vec<PathBuf>,
    /// Port to bind.
    #[arg(long, env = "MCP_PORT", default_value_t = 18765)]
    port: u16,
    /// A path such as /pods/envhost-0 under which every route is also served, and which the
    /// URLs the server hands out begin with, so that a proxy routes each episode's requests by
    /// prefix to this process.
    #[arg(long, env = "ENVHOST_URL_PREFIX", value_name = "PATH", default_value = "",
          hide_default_value = true, value_parser = parse_url_prefix)]
    url_prefix: server::UrlPrefix,
    /// The first environment's card name (and the `{environment_name}` of its tool names); the
    /// component's own when unset or empty.
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
    /// The most episodes alive at once, the root episode included (503 beyond it); at least 1
    /// [default: 1000].
    #[arg(long)]
    max_episodes: Option<usize>,
    /// Allocate instances on demand instead of from a pool sized for --max-episodes.
    #[arg(long)]
    no_pool: bool,
    /// Linear memory per instance, in MiB [default: 256].
    #[arg(long)]
    memory_mib: Option<usize>,
    /// Guest time per call, in milliseconds, on the wall clock from the call's start, before the
    /// call fails with `deadline_exceeded` [default: 10000].
    #[arg(long)]
    cpu_deadline_ms: Option<u64>,
    /// Wall time a caller waits per call, queueing included, in milliseconds [default: 60000].
    #[arg(long)]
    call_timeout_ms: Option<u64>,
    /// Calls that may wait for an episode at once; beyond, HTTP 429 (on MCP, a retryable `busy`
    /// tool error) [default: 64].
    #[arg(long)]
    max_queued_calls: Option<usize>,
    /// Seconds without a call before an episode (not the root one) is evicted; 0 never
    /// [default: 0].
    #[arg(long)]
    idle_timeout_s: Option<u64>,
    /// Threads of their own for guest code; 0 runs guests on the HTTP threads [default: one per
    /// core].
    #[arg(long)]
    guest_threads: Option<usize>,
    /// Threads serving HTTP, each serving every request on the connections handed to it (new
    /// connections go to the thread with the fewest open) [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    http_threads: Option<u16>,
    /// Snapshots that keep a pre-initialised image, so their restores cost one instantiation;
    /// the least recently restored loses its image first; 0 replays every restore.
    #[arg(long, default_value_t = crate::DEFAULT_SNAPSHOT_IMAGES)]
    snapshot_images: usize,
}

/// `--url-prefix`'s value.
fn parse_url_prefix(text: &str) -> Result<server::UrlPrefix, server::InvalidUrlPrefix> {
    server::UrlPrefix::parse(text)
}

/// The host configuration the arguments describe.
fn host_config(args: &Serve) -> anyhow::Result<HostConfig> {
    let defaults = Overrides {
        memory_mib: args.memory_mib,
        cpu_deadline_ms: args.cpu_deadline_ms,
        call_timeout_ms: args.call_timeout_ms,
        max_queued_calls: args.max_queued_calls,
        idle_timeout_s: args.idle_timeout_s,
    };
    let file = args
        .config
        .as_deref()
        .map(File::load)
        .transpose()?
        .unwrap_or_default();
    let mut environments = file.environments(&defaults);
    environments.extend(
        args.environments
            .iter()
            .map(|arg| command_line_environment(arg, &defaults)),
    );
    anyhow::ensure!(
        !environments.is_empty(),
        "name at least one environment component (NAME=PATH.wasm), or --config FILE"
    );
    if let Some(name) = args.name.as_ref().filter(|n| !n.trim().is_empty()) {
        environments[0].card_name = Some(name.clone());
    }
    let allow = [file.fetch.allow.as_slice(), &args.fetch_allow].concat();
    let deny = [file.fetch.deny.as_slice(), &args.fetch_deny].concat();
    let mut transfers = TransferConfig {
        max_file_bytes: args.max_file_bytes,
        policy: FetchPolicy::new(&allow, &deny)?,
        ca_files: args.ca_files.clone(),
        ..TransferConfig::default()
    };
    if !args.data_roots.is_empty() {
        transfers.data_roots = args.data_roots.clone();
    }
    let mut config = HostConfig::new(environments);
    config.max_episodes = args.max_episodes.or(file.max_episodes).unwrap_or(1_000);
    anyhow::ensure!(
        config.max_episodes >= 1,
        "--max-episodes (or max_episodes) must be at least 1: the root episode counts"
    );
    config.pooling = !args.no_pool && file.pool.unwrap_or(true);
    config.transfers = transfers;
    config.guest_threads = match args.guest_threads {
        Some(0) => None,
        Some(n) => Some(n),
        None => Some(std::thread::available_parallelism().map_or(2, usize::from)),
    };
    config.snapshot_images = args.snapshot_images;
    Ok(config)
}

/// The driver to serve, from `--driver` or the configuration's `[driver]` table.
fn driver_config(args: &Serve) -> anyhow::Result<Option<FileDriver>> {
    let grants = [
        ("--display", args.display.is_some()),
        ("--exec", args.exec),
        ("--home", args.home.is_some()),
    ];
    if let Some((flag, _)) = grants.iter().find(|(_, given)| *given)
        && args.driver.is_none()
    {
        anyhow::bail!(
            "{flag} grants a computer driver what it needs, and no driver is served: give it \
             with --driver PATH.wasm (or in the configuration file's [driver] table), or drop it"
        );
    }
    if let Some(component) = &args.driver {
        return Ok(Some(FileDriver {
            component: component.clone(),
            display: args.display.clone(),
            exec: args.exec,
            home: args.home.clone(),
            name: None,
        }));
    }
    let file = args.config.as_deref().map(File::load).transpose()?;
    Ok(file.and_then(|f| f.driver))
}

async fn serve(args: Serve, process: Process) -> anyhow::Result<()> {
    let binding = access::binding(&access::AccessOptions {
        host: args.host.as_deref(),
        port: args.port,
        token_file: args.control_token_file.as_deref(),
        insecure: args.insecure_no_auth,
    })?;
    if let Some(driver) = driver_config(&args)? {
        let card_name = args.name.clone().filter(|n| !n.trim().is_empty());
        return computer::serve(
            computer::config(driver, card_name)?,
            args.max_episodes.unwrap_or(1_000),
            &binding,
            args.url_prefix.clone(),
            shutdown_signal(),
        )
        .await;
    }
    let mut config = host_config(&args)?;
    let tables = args
        .config
        .as_deref()
        .map(File::load)
        .transpose()?
        .map(|file| file.agents)
        .unwrap_or_default();
    let options = agents::AgentOptions {
        agents: args.agents.clone(),
        tables,
        model_url: args.model_url.clone(),
        model: args.model.clone(),
        sessions_dir: args.sessions_dir.clone(),
    };
    agents::configure(options, &mut config)?;
    config.max_turns = args.max_turns as usize;
    let host = Arc::new(Host::new(config).await.map_err(refusal::host)?);
    let serving = server::ServeConfig {
        max_body_bytes: args.max_body_bytes,
        access: binding.access.clone(),
        agent_heartbeat: Duration::from_secs(args.agent_heartbeat_s.max(1)),
        url_prefix: args.url_prefix.clone(),
        allowed_hosts: (!args.allowed_hosts.is_empty())
            .then(|| {
                server::hosts::AllowedHosts::parse(args.allowed_hosts.iter().map(String::as_str))
            })
            .transpose()
            .context("--allowed-hosts")?,
    };
    let (router, state) = server::app(host.clone(), serving)
        .await
        .context("starting the server")?;
    memory::release_free_heap();
    if process == Process::Own {
        memory::release_startup_code();
    }
    tokio::spawn(async {
        let mut every = tokio::time::interval(memory::TRIM_INTERVAL);
        loop {
            every.tick().await;
            memory::release_free_heap();
        }
    });

    let listener = binding.listen().await?;
    let bound = listener.local_addr()?;
    let http_threads = args.http_threads.map_or_else(
        || std::thread::available_parallelism().map_or(2, usize::from),
        usize::from,
    );
    let names: Vec<&str> = host
        .environments()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    tracing::info!(
        environments = ?names,
        pooled = host.is_pooled(),
        "serving {} at http://{bound}/ (card /.well-known/agent-env.json, data plane /agentenv, \
         MCP /mcp; more episodes: POST /episodes)",
        names[0],
    );
    let agents = host.agent_names();
    if !agents.is_empty() {
        tracing::info!(
            ?agents,
            "serving agents at /agents/NAME/invoke; A2A deployments: POST /agents/NAME/deployments"
        );
    }
    binding.announce(bound);
    server::serve_threads(listener, http_threads, router, state, shutdown_signal()).await?;
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM (what `docker stop`, systemd and Kubernetes send).
async fn shutdown_signal() {
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => drop(signal.recv().await),
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
    tracing::info!("shutting down");
}

/// The process the command runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    /// The `envhost` executable, whose allocator is mimalloc: the allocator is tuned and, once
    /// serving, the executable's start-up pages are handed back.
    Own,
    /// Another program's process (the Python package's `envhost` script): its allocator and
    /// pages are left alone.
    Embedded,
}

/// The log filter: `RUST_LOG`'s, else `info`; rmcp's own logs are off unless `RUST_LOG` names
/// rmcp, since its transport errors quote the MCP server's URL whole (an agent URL's secret, a
/// signed query) where envhost's messages give only its origin.
fn log_filter() -> EnvFilter {
    let asked = std::env::var("RUST_LOG").unwrap_or_default();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    match "rmcp=off".parse() {
        Ok(off) if !asked.contains("rmcp") => filter.add_directive(off),
        _ => filter,
    }
}

/// Runs the command `args` (the program's name first, as `std::env::args_os` gives them) on a
/// runtime of its own, until it ends or SIGINT/SIGTERM stops a server: answers the exit status,
/// 0, 1 after printing `error: …` (each cause once) on stderr, or 2 for arguments clap refuses
/// (after printing clap's message; `--help` and `--version` print and answer 0).
pub fn run(
    args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
    process: Process,
) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    if process == Process::Own {
        memory::configure_allocator();
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(log_filter())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let done = match cli.command {
        Command::Serve(args) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the runtime")
            .and_then(|runtime| runtime.block_on(serve(*args, process))),
        Command::New(args) => new::run(&args),
    };
    match done {
        Ok(()) => 0,
        Err(e) => {
            // One line: each cause once, after what failed; no backtrace.
            eprintln!("error: {e:#}");
            1
        }
    }
}
