//! The HTTP client of fetched parts, held to the [`FetchPolicy`] (serve.md#egress-policy): it
//! resolves host names itself and connects only to the addresses the policy allows, so the
//! address checked is the address connected to (no window for DNS rebinding); a URL naming an
//! address, and every redirect, is checked before it is requested. No proxy is used: the
//! policy could not see where a proxy connects.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect;
use url::{Host, Url};

use super::policy::{FetchPolicy, NameVerdict};

/// The most redirects one fetch follows (reqwest's default).
const MAX_REDIRECTS: usize = 10;

/// A fetch the policy refuses, naming the rule; never the address a name resolved to.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the egress policy refuses {host}: {rule}")]
pub struct Refused {
    /// The URL's host as written.
    pub host: String,
    /// The rule that refused it, as [`crate::transfers::policy::Rule`] prints it.
    pub rule: String,
}

impl Refused {
    /// The refusal among `error`'s sources, when the policy is why it failed.
    pub fn find<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
        let mut current = Some(error);
        while let Some(e) = current {
            if let Some(refused) = e.downcast_ref::<Refused>() {
                return Some(refused);
            }
            current = e.source();
        }
        None
    }
}

/// Checks what can be checked of `url` before connecting: an address as its host, or its host
/// name against the name rules.
///
/// # Errors
/// [`Refused`] when a rule refuses it.
pub fn check_url(policy: &FetchPolicy, url: &Url) -> Result<(), Refused> {
    let refused = |host: String, rule: &dyn std::fmt::Display| Refused {
        host,
        rule: rule.to_string(),
    };
    match url.host() {
        Some(Host::Ipv4(addr)) => policy
            .check_addr(addr.into())
            .map_err(|rule| refused(addr.to_string(), rule)),
        Some(Host::Ipv6(addr)) => policy
            .check_addr(addr.into())
            .map_err(|rule| refused(format!("[{addr}]"), rule)),
        Some(Host::Domain(name)) => match policy.check_name(name) {
            NameVerdict::Denied(rule) => Err(refused(name.to_owned(), rule)),
            NameVerdict::Allowed | NameVerdict::Addresses => Ok(()),
        },
        None => Ok(()),
    }
}

/// reqwest's resolver for fetched parts: the system's resolution, then only the addresses the
/// policy allows.
struct PolicedResolver {
    policy: Arc<FetchPolicy>,
}

impl Resolve for PolicedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let verdict = policy.check_name(&host);
            if let NameVerdict::Denied(rule) = verdict {
                return Err(Refused {
                    host,
                    rule: rule.to_string(),
                }
                .into());
            }
            let resolved = tokio::net::lookup_host((host.as_str(), 0)).await?;
            if verdict == NameVerdict::Allowed {
                let addrs: Addrs = Box::new(resolved.collect::<Vec<_>>().into_iter());
                return Ok(addrs);
            }
            let mut allowed: Vec<SocketAddr> = Vec::new();
            let mut refusal = None;
            for addr in resolved {
                match policy.check_addr(addr.ip()) {
                    Ok(()) => allowed.push(addr),
                    Err(rule) => {
                        refusal.get_or_insert_with(|| rule.to_string());
                    }
                }
            }
            match refusal {
                Some(rule) if allowed.is_empty() => Err(Refused { host, rule }.into()),
                _ => {
                    let addrs: Addrs = Box::new(allowed.into_iter());
                    Ok(addrs)
                }
            }
        })
    }
}

/// The client transfers through a grant go through (protocol.md#transfer-errors): `policy` on
/// every connection, no redirect followed, no proxy, 30 s to connect and 60 s idle at most
/// between reads, `roots` trusted besides the system's certificate authorities.
///
/// # Errors
/// reqwest's, when the client cannot be built.
pub fn grant_client(
    policy: Arc<FetchPolicy>,
    roots: Vec<reqwest::Certificate>,
) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .tls_certs_merge(roots)
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(60))
        .no_proxy()
        .dns_resolver(Arc::new(PolicedResolver { policy }))
        .redirect(redirect::Policy::none())
        .build()
}

/// The client every `http(s)://` fetch goes through: `policy` on every connection and
/// redirect, no proxy, `timeout` for the whole request, `roots` trusted besides the system's
/// certificate authorities.
///
/// # Errors
/// reqwest's, when the client cannot be built (its TLS back-end failing to load).
pub fn client(
    policy: Arc<FetchPolicy>,
    timeout: Duration,
    roots: Vec<reqwest::Certificate>,
) -> reqwest::Result<reqwest::Client> {
    let redirects = policy.clone();
    reqwest::Client::builder()
        .tls_certs_merge(roots)
        .timeout(timeout)
        .no_proxy()
        .dns_resolver(Arc::new(PolicedResolver { policy }))
        .redirect(redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
            }
            match check_url(&redirects, attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(refused) => attempt.error(refused),
            }
        }))
        .build()
}
