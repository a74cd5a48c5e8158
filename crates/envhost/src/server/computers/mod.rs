//! A host's computers over HTTP (computer.md#serving, computer.md#episodes): a root computer
//! served at `/` as the reference serves a driver, and the host's other computers beside it,
//! each with every route of a computer under `/episodes/{id}/` and its card and MCP at its agent
//! URL `/agent/{id}/{secret}/`. The routes are registered flat, in one router, each finding the
//! computer it addresses with [`current::CurrentComputer`]; the computers' logic is the
//! embedding API's ([`crate::ComputerEpisode`]), this module only its HTTP edges.
//!
//! - [`episodes`]: `/episodes`, forks, snapshots and restores;
//! - [`routes`]: a computer's own routes: the card, MCP, the data plane, the extensions, tool
//!   access;
//! - [`current`]: the computer a request addresses, and the answers of paths and verbs it does
//!   not serve.

mod current;
mod episodes;
mod routes;

use std::sync::{Arc, PoisonError, RwLock};

use axum::Router;
use axum::middleware;
use axum::routing::{MethodRouter, any};
use http::Method;

use super::access::{self, AGENT_PREFIX, Access};
use super::mcp::sessions::Sessions;
use super::prefix::UrlPrefix;
use crate::embedding::{ComputerEpisode, ComputerError, Host};
use crate::ids::IdMap;
use envhost_protocol::card::{MCP_PATH, WELL_KNOWN_PATH};

/// The served computers: the host, its root computer, their MCP sessions, and the URL prefix
/// the URLs handed out carry.
pub struct Computers {
    host: Arc<Host>,
    root: Arc<ComputerEpisode>,
    /// Each computer's MCP sessions, by its key, made at its first `initialize`.
    sessions: RwLock<IdMap<Arc<Sessions>>>,
    url_prefix: UrlPrefix,
}

/// What the routes share.
type Shared = Arc<Computers>;

impl Computers {
    /// `host`'s computers, with a new computer of its driver `driver` served at the root;
    /// `POST /episodes` makes more of the same driver.
    ///
    /// # Errors
    /// [`ComputerError`] when the root computer cannot be created.
    pub async fn new(host: Arc<Host>, driver: &str) -> Result<Self, ComputerError> {
        let root = host.create_computer(driver).await?;
        Ok(Self {
            host,
            root,
            sessions: RwLock::default(),
            url_prefix: UrlPrefix::default(),
        })
    }

    /// The same computers also served under `prefix`, which the URLs the server hands out
    /// carry (serve.md#behind-a-proxy).
    #[must_use]
    pub fn with_url_prefix(mut self, prefix: UrlPrefix) -> Self {
        self.url_prefix = prefix;
        self
    }

    /// The computer served at the root.
    pub fn root(&self) -> &Arc<ComputerEpisode> {
        &self.root
    }

    /// `episode`'s MCP sessions, when one was ever opened.
    fn sessions(&self, episode: &ComputerEpisode) -> Option<Arc<Sessions>> {
        self.sessions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&episode.key())
            .cloned()
    }

    /// `episode`'s MCP sessions, made if need be (to open one).
    fn sessions_or_default(&self, episode: &ComputerEpisode) -> Arc<Sessions> {
        if let Some(sessions) = self.sessions(episode) {
            return sessions;
        }
        self.sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(episode.key())
            .or_default()
            .clone()
    }

    /// Forgets the MCP sessions of `episode`, which was dropped.
    fn forget(&self, episode: &ComputerEpisode) {
        self.sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&episode.key());
    }
}

/// One route: its path pattern, the verbs it answers and its handlers.
type Mount = (String, &'static [Method], MethodRouter<Shared>);

/// Every route, for a driver with `optional`'s routes: the server's own ([`episodes`]), and
/// each computer's ([`routes`]) at the root, under `/episodes/{id}` and, the card and MCP
/// only, under the agent URL `/agent/{id}/{secret}`.
fn mounts(optional: routes::Optional) -> Vec<Mount> {
    let mut mounts = episodes::mounts();
    let agent_base = format!("{AGENT_PREFIX}/{{id}}/{{secret}}");
    for (path, methods, handlers) in routes::mounts(optional) {
        mounts.push((format!("/episodes/{{id}}{path}"), methods, handlers.clone()));
        if [WELL_KNOWN_PATH, MCP_PATH].contains(&path) {
            mounts.push((format!("{agent_base}{path}"), methods, handlers.clone()));
        }
        mounts.push((path.to_owned(), methods, handlers));
    }
    mounts
}

/// Every route of a computers' server, as its path pattern and the verbs it answers: its own,
/// and every route of a computer (the optional ones included) at the root and under
/// `/episodes/{id}`, and its card and MCP under its agent URL. What the access tests walk.
pub fn route_table() -> Vec<(String, &'static [Method])> {
    mounts(routes::Optional::ALL)
        .into_iter()
        .map(|(path, methods, _)| (path, methods))
        .collect()
}

/// The routes of `computers` (docs/computer.md#episodes): [`route_table`]'s, those of the
/// optional routes its root computer's driver has; any other path under `/episodes/{id}/` is
/// the computer's 404, any other path at all the root's. Every request first passes
/// [`access::guard`] with `access`, at the root and under the URL prefix
/// ([`Computers::with_url_prefix`]).
pub fn router(computers: Computers, access: Access) -> Router {
    let prefix = computers.url_prefix.clone();
    let optional = routes::Optional::of(&computers.root);
    let shared: Shared = Arc::new(computers);
    let router = mounts(optional)
        .into_iter()
        .fold(Router::new(), |router, (path, _, handlers)| {
            router.route(&path, handlers)
        })
        .route("/episodes/{id}/{*rest}", any(current::unserved_path))
        .fallback(current::not_found)
        .with_state(shared)
        .layer(middleware::from_fn_with_state(access, access::guard));
    prefix.serve(router)
}
