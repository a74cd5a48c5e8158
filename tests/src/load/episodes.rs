//! The episodes API of an envhost server: creating an episode (`POST /episodes`), deleting one
//! (`DELETE /episodes/{id}`), and many of either a few at a time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::{Method, header};
use serde::Deserialize;
use serde_json::json;

use super::conn::{Conn, Target};
use super::data_plane::seed;

/// An episode created with `POST /episodes`.
#[derive(Clone, Debug)]
pub struct Episode {
    /// Its id.
    pub id: String,
    /// Its environment's name.
    pub environment: String,
    /// Where its routes are: the server, with the episode's url as base path.
    pub target: Arc<Target>,
}

/// An answer to `POST /episodes` other than 201.
#[derive(Clone, Debug)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// The coded error's code (`{"ok": false, "error": {"code": ...}}`), when the body has one.
    pub code: Option<String>,
    /// The `Retry-After` header, when present.
    pub retry_after: Option<String>,
    /// The start of the body, to show.
    pub body: String,
}

/// How `POST /episodes` was answered.
#[derive(Clone, Debug)]
pub enum Created {
    /// 201: the new episode.
    Episode(Episode),
    /// Any other status.
    Refused(Refusal),
}

/// The 201 answer of `POST /episodes`.
#[derive(Deserialize)]
struct CreatedBody {
    id: String,
    environment: String,
    url: String,
}

/// A coded error answer, `{"ok": false, "error": {"code": ...}}`.
#[derive(Deserialize)]
struct ErrorBody {
    error: Option<ErrorObject>,
}

#[derive(Deserialize)]
struct ErrorObject {
    code: Option<String>,
}

/// The body of `POST /episodes`: `{"environment": name}`, or `{}` for the server's default (the
/// root episode's environment).
fn create_body(environment: Option<&str>) -> Bytes {
    match environment {
        Some(name) => json!({"environment": name}).to_string().into(),
        None => Bytes::from_static(b"{}"),
    }
}

/// `POST /episodes` for an episode of `environment` (the server's default when `None`).
///
/// # Errors
/// When the request fails, or a 201 answer is not the documented object.
pub async fn create(
    conn: &mut Conn,
    target: &Target,
    environment: Option<&str>,
) -> anyhow::Result<Created> {
    let response = conn
        .exchange(target, Method::POST, "/episodes", create_body(environment))
        .await
        .context("POST /episodes")?;
    let status = response.status().as_u16();
    let body = response.body();
    if status == 201 {
        let created: CreatedBody =
            serde_json::from_slice(body).context("reading the 201 answer of POST /episodes")?;
        return Ok(Created::Episode(Episode {
            target: Arc::new(target.nested(&created.url)),
            id: created.id,
            environment: created.environment,
        }));
    }
    let code = serde_json::from_slice::<ErrorBody>(body)
        .ok()
        .and_then(|b| b.error)
        .and_then(|e| e.code);
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Ok(Created::Refused(Refusal {
        status,
        code,
        retry_after,
        body: String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned(),
    }))
}

/// `DELETE /episodes/{id}`; answers the status (200 when deleted, 404 when there is no such
/// episode).
///
/// # Errors
/// When the request fails.
pub async fn delete(conn: &mut Conn, target: &Target, id: &str) -> anyhow::Result<u16> {
    let response = conn
        .exchange(
            target,
            Method::DELETE,
            &format!("/episodes/{id}"),
            Bytes::new(),
        )
        .await
        .with_context(|| format!("DELETE /episodes/{id}"))?;
    Ok(response.status().as_u16())
}

/// Creates `n` episodes of `environment` (the server's default when `None`), `concurrency` at a
/// time, each over its worker's connection, seeding each ([`seed`]) when `seeded`. When one
/// cannot be created (or seeded), stops, deletes those it created and fails.
///
/// # Errors
/// The first failure, e.g. a 503 at the server's episode cap.
pub async fn create_many(
    target: &Target,
    n: usize,
    environment: Option<&str>,
    concurrency: usize,
    seeded: bool,
) -> anyhow::Result<Vec<Episode>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let worker = || async {
        let mut created = Vec::new();
        let outcome = async {
            let mut conn = Conn::open(target).await?;
            while !failed.load(Ordering::Relaxed) && next.fetch_add(1, Ordering::Relaxed) < n {
                let episode = match create(&mut conn, target, environment).await? {
                    Created::Episode(episode) => episode,
                    Created::Refused(r) => bail!("POST /episodes: HTTP {}: {}", r.status, r.body),
                };
                created.push(episode.clone());
                if seeded {
                    seed(&mut conn, &episode.target)
                        .await
                        .with_context(|| format!("seeding episode {}", episode.id))?;
                }
            }
            anyhow::Ok(())
        }
        .await;
        if outcome.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        (created, outcome)
    };
    let results =
        futures::future::join_all((0..concurrency.clamp(1, n.max(1))).map(|_| worker())).await;
    let mut episodes = Vec::with_capacity(n);
    let mut error = None;
    for (created, outcome) in results {
        episodes.extend(created);
        if let Err(e) = outcome {
            error.get_or_insert(e);
        }
    }
    match error {
        None => Ok(episodes),
        Some(e) => {
            let ids: Vec<String> = episodes.into_iter().map(|e| e.id).collect();
            let created = ids.len();
            let deleted = delete_many(target, &ids, concurrency).await;
            Err(e.context(format!(
                "creating {n} episodes ({created} created, {} deleted again)",
                deleted.deleted
            )))
        }
    }
}

/// Deletes the episodes `episodes` (as [`delete_many`]); an error names those not deleted.
pub async fn delete_all(target: &Target, episodes: &[Episode]) -> anyhow::Result<()> {
    let ids: Vec<String> = episodes.iter().map(|e| e.id.clone()).collect();
    let deleted = delete_many(target, &ids, DELETE_CONCURRENCY).await;
    if deleted.failed > 0 {
        bail!(
            "{} of {} episodes were not deleted: {}",
            deleted.failed,
            ids.len(),
            deleted.failures.join("; ")
        );
    }
    Ok(())
}

/// Deletes [`delete_all`] sends at once.
const DELETE_CONCURRENCY: usize = 8;

/// What [`delete_many`] did.
#[derive(Debug, Default)]
pub struct Deleted {
    /// Episodes deleted (200).
    pub deleted: usize,
    /// Episodes that were not: each with why (status or error); at most 10 kept.
    pub failures: Vec<String>,
    /// How many were not deleted, kept or not.
    pub failed: usize,
}

/// Deletes the episodes `ids`, `concurrency` at a time, each worker over its own connection.
pub async fn delete_many(target: &Target, ids: &[String], concurrency: usize) -> Deleted {
    let next = AtomicUsize::new(0);
    let worker = || async {
        let mut done = Deleted::default();
        let mut conn: Option<Conn> = None;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(id) = ids.get(i) else { break };
            let outcome = async {
                let open = match conn.take() {
                    Some(c) if !c.is_closed() => c,
                    _ => Conn::open(target).await?,
                };
                let conn = conn.insert(open);
                delete(conn, target, id).await
            }
            .await;
            match outcome {
                Ok(200) => done.deleted += 1,
                Ok(status) => done.fail(format!("episode {id}: HTTP {status}")),
                Err(e) => done.fail(format!("episode {id}: {e:#}")),
            }
        }
        done
    };
    let workers = concurrency.clamp(1, ids.len().max(1));
    let mut total = Deleted::default();
    for done in futures::future::join_all((0..workers).map(|_| worker())).await {
        total.deleted += done.deleted;
        total.failed += done.failed;
        for failure in done.failures {
            total.note(failure);
        }
    }
    total
}

impl Deleted {
    /// Counts a failure.
    fn fail(&mut self, why: String) {
        self.failed += 1;
        self.note(why);
    }

    /// Keeps a failure to show, up to 10.
    fn note(&mut self, why: String) {
        if self.failures.len() < 10 {
            self.failures.push(why);
        }
    }
}

/// The answer of `GET /episodes`.
#[derive(Deserialize)]
struct Listed {
    episodes: Vec<ListedEpisode>,
}

#[derive(Deserialize)]
struct ListedEpisode {
    id: String,
}

/// `GET /episodes`: the ids of the live episodes (the root one among them).
///
/// # Errors
/// When the request fails or answers anything but the documented list.
pub async fn list(conn: &mut Conn, target: &Target) -> anyhow::Result<Vec<String>> {
    let response = conn
        .exchange(target, Method::GET, "/episodes", Bytes::new())
        .await
        .context("GET /episodes")?;
    super::conn::require_success(&response).context("GET /episodes")?;
    let listed: Listed =
        serde_json::from_slice(response.body()).context("reading the answer of GET /episodes")?;
    Ok(listed.episodes.into_iter().map(|e| e.id).collect())
}
