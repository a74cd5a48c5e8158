//! `envhost.Host`: environments, computer drivers and agents loaded once, and the episodes and
//! computers made of them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use envhost::agent::model::ModelEndpoint;
use envhost::agent::{Prompt, Scope};
use envhost::protocol::ToolResult;
use envhost::protocol::computer::settings::Settings;
use envhost::transfers::FetchPolicy;
use envhost::{AgentConfig, ComputerConfig, EnvironmentConfig, Host, HostConfig, Limits};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::computer::{PyComputer, PyComputerSnapshot};
use crate::episode::{PyEpisode, PySnapshot};
use crate::errors::{self, EnvhostError};
use crate::results::PyToolResult;
use crate::turn::PyTurn;

/// A host and the runtime its episodes' calls run on.
pub struct Shared {
    /// The host.
    pub host: Host,
    /// One worker thread for the host's background tasks (epoch ticks, image making); a call
    /// runs on the Python thread that makes it, the GIL released.
    pub runtime: tokio::runtime::Runtime,
}

/// Loads environments (and agents bound to them) and computer drivers once and makes isolated
/// episodes of the environments, each in tens of microseconds, and computers of the drivers
/// (docs/python.md#host).
///
/// `Host(environments=None, *, computers=None, agents=None, max_episodes=1000, memory_mib=256,
/// cpu_deadline_ms=10000, call_timeout_ms=60000, max_queued_calls=64, pooling=True,
/// data_roots=None, fetch_allow=(), fetch_deny=(), snapshot_images=16, model_url=None,
/// model="default", max_turns=1000, sessions_dir=None)`
///
/// - `environments`: `{name: path}` or `{name: {"component": path, "card_name": str}}`; the first
///   is the default of `episode()`.
/// - `computers`: `{name: path}` or `{name: {"component": path, "display": ":99", "exec": bool,
///   "home": path, "settings": {...}, "card_name": str}}` (docs/python.md#computers); the first is
///   the default of `computer()`.
/// - `agents`: `{name: path}` (bound to the first environment) or `{name: {"component": path,
///   "environment": name, "model": str}}`; their model endpoint is `model_url` (else
///   `$OPENAI_BASE_URL`, else `$LITELLM_BASE_URL`).
///
/// Raises `EnvhostError` (`load_failed`, `invalid_params`) when a component cannot be loaded.
#[pyclass(name = "Host", module = "envhost", frozen)]
pub struct PyHost {
    pub(crate) shared: Arc<Shared>,
}

#[pymethods]
impl PyHost {
    #[new]
    #[pyo3(
        text_signature = "(environments=None, *, computers=None, agents=None, max_episodes=1000, \
        memory_mib=256, cpu_deadline_ms=10000, call_timeout_ms=60000, max_queued_calls=64, \
        pooling=True, data_roots=None, fetch_allow=(), fetch_deny=(), snapshot_images=16, \
        model_url=None, model='default', max_turns=1000, sessions_dir=None)"
    )]
    #[pyo3(signature = (
        environments = None, *, computers = None, agents = None, max_episodes = 1000,
        memory_mib = None,
        cpu_deadline_ms = None, call_timeout_ms = None, max_queued_calls = None, pooling = true,
        data_roots = None, fetch_allow = Vec::new(), fetch_deny = Vec::new(),
        snapshot_images = envhost::DEFAULT_SNAPSHOT_IMAGES, model_url = None,
        model = "default".to_owned(), max_turns = 1000, sessions_dir = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        environments: Option<&Bound<'_, PyDict>>,
        computers: Option<&Bound<'_, PyDict>>,
        agents: Option<&Bound<'_, PyDict>>,
        max_episodes: usize,
        memory_mib: Option<usize>,
        cpu_deadline_ms: Option<u64>,
        call_timeout_ms: Option<u64>,
        max_queued_calls: Option<usize>,
        pooling: bool,
        data_roots: Option<Vec<PathBuf>>,
        fetch_allow: Vec<String>,
        fetch_deny: Vec<String>,
        snapshot_images: usize,
        model_url: Option<String>,
        model: String,
        max_turns: usize,
        sessions_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let mut limits = Limits::default();
        if let Some(mib) = memory_mib {
            limits.memory_bytes = mib << 20;
        }
        if let Some(ms) = cpu_deadline_ms {
            limits.cpu_deadline = Duration::from_millis(ms);
        }
        if let Some(ms) = call_timeout_ms {
            limits.call_timeout = Duration::from_millis(ms);
        }
        if let Some(n) = max_queued_calls {
            limits.max_queued_calls = n.max(1);
        }
        let mut loaded = Vec::new();
        for (name, spec) in environments.iter().flat_map(|e| e.iter()) {
            let name: String = name.extract()?;
            let (component, table) = component_of(&spec, &name, &["component", "card_name"])?;
            let mut environment = EnvironmentConfig::new(name, component);
            environment.limits = limits;
            if let Some(table) = table {
                environment.card_name = table
                    .get_item("card_name")?
                    .map(|n| n.extract())
                    .transpose()?;
            }
            loaded.push(environment);
        }
        if max_episodes == 0 {
            return Err(errors::invalid_params(
                py,
                "max_episodes must be at least 1",
            ));
        }
        let drivers = match computers {
            Some(computers) => computer_configs(computers, limits)?,
            None => Vec::new(),
        };
        if loaded.is_empty() && drivers.is_empty() {
            return Err(errors::invalid_params(
                py,
                "give at least one environment or computer: environments={name: path} or \
                 computers={name: path}",
            ));
        }
        let first = loaded.first().map(|e| e.name.clone()).unwrap_or_default();
        let mut config = HostConfig::new(loaded);
        config.computers = drivers;
        config.max_episodes = max_episodes;
        config.pooling = pooling;
        if let Some(roots) = data_roots {
            config.transfers.data_roots = roots;
        }
        config.transfers.policy = FetchPolicy::new(&fetch_allow, &fetch_deny)
            .map_err(|e| errors::invalid_params(py, e.to_string()))?;
        config.snapshot_images = snapshot_images;
        config.max_turns = max_turns.max(1);
        if let Some(agents) = agents.filter(|a| !a.is_empty()) {
            for (name, spec) in agents.iter() {
                let name: String = name.extract()?;
                let (component, table) =
                    component_of(&spec, &name, &["component", "environment", "model"])?;
                let mut agent = AgentConfig::new(name, component, first.clone());
                agent.model.clone_from(&model);
                if let Some(table) = table {
                    if let Some(environment) = table.get_item("environment")? {
                        agent.environment = environment.extract()?;
                    }
                    if let Some(named) = table.get_item("model")? {
                        agent.model = named.extract()?;
                    }
                }
                agent.limits = limits;
                config.agents.push(agent);
            }
            config.model = ModelEndpoint::from_env(model_url)
                .map_err(|e| errors::invalid_params(py, format!("the model endpoint: {e}")))?;
            config.sessions_dir = sessions_dir;
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("envhost")
            .enable_all()
            .build()
            .map_err(|e| EnvhostError::new_err(format!("starting the runtime: {e}")))?;
        let host = py
            .detach(|| runtime.block_on(Host::new(config)))
            .map_err(|e| {
                let mut error = envhost::protocol::CodedError::new("load_failed", format!("{e:#}"));
                error.status = 500;
                errors::coded(py, &error)
            })?;
        Ok(Self {
            shared: Arc::new(Shared { host, runtime }),
        })
    }

    /// The environments' names, the default first.
    #[getter]
    fn environments(&self) -> Vec<String> {
        self.shared
            .host
            .environments()
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// The computer drivers' names, the default first.
    #[getter]
    fn computers(&self) -> Vec<String> {
        self.shared
            .host
            .drivers()
            .iter()
            .map(|d| d.name.clone())
            .collect()
    }

    /// The agents' names.
    #[getter]
    fn agents(&self) -> Vec<String> {
        self.shared
            .host
            .agent_names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// How many episodes are open.
    #[getter]
    fn episode_count(&self) -> usize {
        self.shared.host.episodes().len()
    }

    /// How many computers are open.
    #[getter]
    fn computer_count(&self) -> usize {
        self.shared.host.computers().len()
    }

    /// A new computer of the driver `name` (the first when None): a fresh instance with its
    /// settings, no frames, its own tool access (docs/python.md#computers).
    ///
    /// Raises `EnvhostError`: `computer_not_found` (its message names those served),
    /// `too_many_episodes` (retryable: computers and episodes share `max_episodes`),
    /// `unavailable`.
    #[pyo3(signature = (name = None))]
    fn computer(&self, py: Python<'_>, name: Option<String>) -> PyResult<PyComputer> {
        let host = &self.shared.host;
        let name = name
            .or_else(|| host.drivers().first().map(|d| d.name.clone()))
            .unwrap_or_default();
        let shared = &self.shared;
        let made = py.detach(|| shared.runtime.block_on(host.create_computer(&name)));
        let computer = made.map_err(|e| errors::computer(py, &e))?;
        Ok(PyComputer::new(self.shared.clone(), computer))
    }

    /// A new episode of `environment` (the first when None), loaded with `parts` by one
    /// `data/add` when given.
    ///
    /// Raises `EnvhostError`: `environment_not_found` (its message names those served),
    /// `too_many_episodes` (retryable, at `max_episodes`), `unavailable`, `invalid_params` or
    /// `add_failed` for parts (no episode is left then).
    #[pyo3(signature = (environment = None, parts = None))]
    fn episode(
        &self,
        py: Python<'_>,
        environment: Option<String>,
        parts: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyEpisode> {
        let name = environment
            .or_else(|| {
                let first = self.shared.host.environments().first();
                first.map(|e| e.name.clone())
            })
            .unwrap_or_default();
        let parts = parts
            .filter(|p| !p.is_none())
            .map(crate::convert::to_parts)
            .transpose()?;
        let shared = &self.shared;
        let made = py.detach(|| {
            shared.runtime.block_on(async {
                match parts {
                    Some(parts) => shared.host.create_seeded_episode(&name, parts).await,
                    None => shared.host.create_episode(&name).await.map_err(Into::into),
                }
            })
        });
        let episode = made.map_err(|e| errors::seed(py, e))?;
        Ok(PyEpisode::new(self.shared.clone(), episode))
    }

    /// A new episode in the state `snapshot` was taken in: a `Snapshot` of this host (whose
    /// restores after the first instantiate a pre-initialised image), or a `Snapshot` of another
    /// host or its bytes (`bytes(snapshot)`) from any host serving the same component
    /// (replayed). A `ComputerSnapshot` of this host makes a new `Computer` in its state.
    ///
    /// Raises `EnvhostError`: `invalid_snapshot`, `component_mismatch`, `replay_diverged`,
    /// `too_many_episodes`, `unavailable`; for a computer `snapshot_not_found`, `fork_failed`.
    fn restore<'py>(
        &self,
        py: Python<'py>,
        snapshot: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Ok(kept) = snapshot.cast::<PyComputerSnapshot>() {
            let computer = kept.get().restore(py, &self.shared)?;
            return Ok(Bound::new(py, computer)?.into_any());
        }
        Ok(Bound::new(py, self.restore_episode(py, snapshot)?)?.into_any())
    }

    /// The snapshot in `data` (`bytes(snapshot)` of this host or another serving the same
    /// component), kept by this host for restores until the `Snapshot` is dropped.
    ///
    /// Raises `EnvhostError`: `invalid_snapshot`, `component_mismatch`, `too_many_snapshots`.
    fn load_snapshot(&self, py: Python<'_>, data: &[u8]) -> PyResult<PySnapshot> {
        let id = self
            .shared
            .host
            .import_snapshot(data)
            .map_err(|e| errors::snapshot(py, &e))?;
        Ok(PySnapshot::new(self.shared.clone(), id))
    }

    /// Calls many tools at once: `calls` is a list of `(episode, name, arguments)` tuples, all
    /// as `role`; answers their `ToolResult`s in the same order. The GIL is released once for
    /// the whole batch, and the episodes are spread over `threads` threads (default: one per
    /// core): each episode's calls run on one thread, in the order of the list, and episodes on
    /// different threads run at once. This is how one Python thread steps thousands of episodes
    /// on every core: a call from Python costs a GIL hand-off, a call in a batch does not.
    ///
    /// Raises `EnvhostError` `invalid_params` (before any call) for a tuple that does not fit
    /// or arguments that are not a dict, `episode_not_found` for a closed episode.
    #[pyo3(signature = (calls, *, role = None, threads = None))]
    fn call_many(
        &self,
        py: Python<'_>,
        calls: Vec<(PyRef<'_, PyEpisode>, String, Option<Bound<'_, PyAny>>)>,
        role: Option<String>,
        threads: Option<usize>,
    ) -> PyResult<Vec<PyToolResult>> {
        let threads = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
            .clamp(1, calls.len().max(1));
        let mut shares: Vec<Vec<Call<'_>>> = (0..threads).map(|_| Vec::new()).collect();
        let mut placed: HashMap<&str, usize> = HashMap::new();
        for (index, (episode, name, arguments)) in calls.iter().enumerate() {
            let arguments = crate::convert::to_object(arguments.as_ref(), "arguments")?;
            let open = episode.open(py)?.clone();
            let next = placed.len() % threads;
            let share = *placed.entry(episode.id()).or_insert(next);
            shares[share].push((index, open, name.as_str(), arguments));
        }
        let caller = crate::episode::caller(role, None);
        let runtime = &self.shared.runtime;
        let answered = py.detach(|| {
            let run = |share: Vec<Call<'_>>| {
                runtime.block_on(async {
                    let mut done = Vec::with_capacity(share.len());
                    for (index, episode, name, arguments) in share {
                        done.push((
                            index,
                            episode.call_tool(name, arguments, caller.clone()).await,
                        ));
                    }
                    done
                })
            };
            std::thread::scope(|scope| {
                let mut shares = shares.into_iter().filter(|s| !s.is_empty());
                let first = shares.next();
                let others: Vec<_> = shares
                    .map(|share| {
                        let indices: Vec<usize> = share.iter().map(|call| call.0).collect();
                        (indices, scope.spawn(move || run(share)))
                    })
                    .collect();
                let mut answered = first.map(run).unwrap_or_default();
                for (indices, other) in others {
                    match other.join() {
                        Ok(done) => answered.extend(done),
                        Err(_) => answered.extend(indices.into_iter().map(|index| {
                            let why = "the batch's thread stopped before this call";
                            (index, ToolResult::text_error(why.into()))
                        })),
                    }
                }
                answered
            })
        });
        let mut results: Vec<Option<ToolResult>> = (0..calls.len()).map(|_| None).collect();
        for (index, result) in answered {
            results[index] = Some(result);
        }
        Ok(results
            .into_iter()
            .map(|r| {
                PyToolResult::new(r.unwrap_or_else(|| ToolResult::text_error("no answer".into())))
            })
            .collect())
    }

    /// A turn of `agent` on `episode` (an episode of the agent's environment), its events an
    /// iterator of dicts (`{"type": "text", "delta"}`, `tool_started`, `tool_ended`, ...,
    /// ending with exactly one `completed` or `failed`), docs/agents.md#turns.
    ///
    /// Raises `EnvhostError` `agent_not_found` or `episode_not_found`; a turn that fails ends
    /// with a `failed` event instead.
    #[pyo3(signature = (agent, episode, prompt, *, session = None))]
    fn invoke(
        &self,
        py: Python<'_>,
        agent: &str,
        episode: &PyEpisode,
        prompt: String,
        session: Option<String>,
    ) -> PyResult<PyTurn> {
        let scope = Scope {
            session: session.unwrap_or_else(|| episode.id().to_owned()),
            parent_session: None,
            branch_hints: Vec::new(),
            episode: Some(episode.id().to_owned()),
        };
        let _entered = self.shared.runtime.enter();
        let events = self
            .shared
            .host
            .invoke(agent, scope, Prompt::text(prompt))
            .map_err(|e| {
                let mut error = envhost::protocol::CodedError::new(e.code(), e.to_string());
                error.status = 404;
                errors::coded(py, &error)
            })?;
        Ok(PyTurn::new(self.shared.clone(), events))
    }
}

impl PyHost {
    /// [`PyHost::restore`] of an environment's snapshot or its bytes.
    fn restore_episode(&self, py: Python<'_>, snapshot: &Bound<'_, PyAny>) -> PyResult<PyEpisode> {
        let host = &self.shared.host;
        let held = snapshot.cast::<PySnapshot>().ok();
        let (id, imported) =
            if let Some(held) = held.as_ref().filter(|h| h.get().is_of(&self.shared)) {
                (held.get().id().to_owned(), false)
            } else if let Some(file) = held.map(|h| h.get().file()) {
                let file = file.ok_or_else(|| {
                    errors::invalid_params(py, "the snapshot's host no longer keeps it")
                })?;
                let id = host
                    .import_snapshot(&file)
                    .map_err(|e| errors::snapshot(py, &e))?;
                (id, true)
            } else if let Ok(bytes) = snapshot.cast::<PyBytes>() {
                let id = host
                    .import_snapshot(bytes.as_bytes())
                    .map_err(|e| errors::snapshot(py, &e))?;
                (id, true)
            } else {
                return Err(errors::invalid_params(
                    py,
                    "restore takes a Snapshot, its bytes or a ComputerSnapshot",
                ));
            };
        let shared = &self.shared;
        let restored = py.detach(|| shared.runtime.block_on(shared.host.restore(&id)));
        if imported {
            host.delete_snapshot(&id);
        }
        let episode = restored.map_err(|e| errors::snapshot(py, &e))?;
        Ok(PyEpisode::new(self.shared.clone(), episode))
    }
}

/// One call of a batch: its index in the list, the episode, the tool, the arguments.
type Call<'a> = (
    usize,
    Arc<envhost::Episode>,
    &'a str,
    serde_json::Map<String, serde_json::Value>,
);

/// A component's path from `spec` (a path, or a dict with `"component"` and no key but
/// `keys`), and the dict.
fn component_of<'py>(
    spec: &Bound<'py, PyAny>,
    name: &str,
    keys: &[&str],
) -> PyResult<(PathBuf, Option<Bound<'py, PyDict>>)> {
    if let Ok(path) = spec.extract::<PathBuf>() {
        return Ok((path, None));
    }
    let py = spec.py();
    let table = spec.cast::<PyDict>().map_err(|_| {
        errors::invalid_params(
            py,
            format!("{name}: give a component's path, or a dict with \"component\""),
        )
    })?;
    for key in table.keys() {
        let key: String = key.extract()?;
        if !keys.contains(&key.as_str()) {
            return Err(errors::invalid_params(
                py,
                format!(
                    "{name}: unknown key {key:?}; the keys are {}",
                    keys.join(", ")
                ),
            ));
        }
    }
    let component = table
        .get_item("component")?
        .ok_or_else(|| {
            errors::invalid_params(py, format!("{name}: the dict has no \"component\""))
        })?
        .extract::<PathBuf>()?;
    Ok((component, Some(table.clone())))
}

/// The keys of a computer's dict.
const COMPUTER_KEYS: [&str; 6] = [
    "component",
    "display",
    "exec",
    "home",
    "settings",
    "card_name",
];

/// `computers` (`{name: path}` or `{name: {"component", "display", "exec", "home", "settings",
/// "card_name"}}`) as the host's computer configurations, each under `limits`.
fn computer_configs(
    computers: &Bound<'_, PyDict>,
    limits: Limits,
) -> PyResult<Vec<ComputerConfig>> {
    let py = computers.py();
    let mut configs = Vec::new();
    for (name, spec) in computers.iter() {
        let name: String = name.extract()?;
        let (component, table) = component_of(&spec, &name, &COMPUTER_KEYS)?;
        let mut computer = ComputerConfig::new(name.clone(), component);
        computer.limits = limits;
        if let Some(table) = table {
            let item = |key: &str| table.get_item(key).map(|v| v.filter(|v| !v.is_none()));
            computer.card_name = item("card_name")?.map(|v| v.extract()).transpose()?;
            computer.grants.display = item("display")?.map(|v| v.extract()).transpose()?;
            computer.grants.exec = item("exec")?
                .map(|v| v.extract())
                .transpose()?
                .unwrap_or(false);
            computer.grants.home = item("home")?.map(|v| v.extract()).transpose()?;
            if let Some(settings) = item("settings")? {
                let text = crate::convert::to_json(&settings, "settings")?.to_string();
                computer.settings = Settings::from_json(&text).map_err(|why| {
                    errors::invalid_params(py, format!("{name}: settings: {why}"))
                })?;
            }
        }
        configs.push(computer);
    }
    Ok(configs)
}
