//! The egress policy of fetched file parts (serve.md#egress-policy): which hosts and addresses an
//! `http(s)://` file part of `data/add` may be fetched from.
//!
//! A rule is a network (`10.0.0.0/8`, or one address), a host name (`metadata.google.internal`)
//! or a domain's subdomains (`*.internal`), allowed or denied. A fetch is decided first by its
//! host name: the most specific name rule that matches decides (an exact name before a suffix,
//! a longer suffix before a shorter one). When no name rule matches, every address the name
//! resolves to is decided by the rule of the longest prefix that contains it, and only the
//! addresses allowed are connected to; an address no rule contains is allowed. At equal
//! specificity the operator's rule wins over a built-in one, and a deny over an allow.
//!
//! Built in, and overridden by a more specific `allow`: link-local addresses (169.254.0.0/16,
//! fe80::/10, where every cloud's metadata service answers), the other metadata addresses
//! (fd00:ec2::254, 100.100.100.200, `metadata.google.internal`) and the unspecified addresses
//! (0.0.0.0/8, ::), which Linux connects to the machine itself.

use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;

/// What a rule applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Every address of a network; a bare address is a network of one.
    Net(IpNet),
    /// One host name, lowercase, without a trailing dot.
    Name(String),
    /// Every subdomain of a domain (`*.internal`: `a.internal`, `a.b.internal`, not `internal`),
    /// the domain lowercase, without its `*.`.
    Subdomains(String),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Net(net) if net.prefix_len() == net.max_prefix_len() => {
                write!(f, "{}", net.addr())
            }
            Self::Net(net) => write!(f, "{net}"),
            Self::Name(name) => f.write_str(name),
            Self::Subdomains(domain) => write!(f, "*.{domain}"),
        }
    }
}

/// Whether a rule lets a fetch through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `--fetch-allow`.
    Allow,
    /// `--fetch-deny`.
    Deny,
}

/// One rule of the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// What it applies to.
    pub target: Target,
    /// What it decides.
    pub verdict: Verdict,
    /// Why it is built in; none for the operator's rules.
    pub builtin: Option<&'static str>,
}

impl fmt::Display for Rule {
    /// `--fetch-deny 127.0.0.0/8` for the operator's rules; `the built-in deny of
    /// 169.254.0.0/16 (link-local)` for the others.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = match self.verdict {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
        };
        match self.builtin {
            None => write!(f, "--fetch-{verdict} {}", self.target),
            Some(why) => write!(f, "the built-in {verdict} of {} ({why})", self.target),
        }
    }
}

impl Rule {
    /// How specific the rule is for what it matched: its prefix length for a network, the
    /// name's length (an exact name outranking every suffix) for a name; then the operator's
    /// over the built-in, a deny over an allow.
    fn rank(&self) -> (usize, bool, bool) {
        let specificity = match &self.target {
            Target::Net(net) => usize::from(net.prefix_len()),
            Target::Name(name) => usize::MAX / 2 + name.len(),
            Target::Subdomains(domain) => domain.len(),
        };
        (
            specificity,
            self.builtin.is_none(),
            self.verdict == Verdict::Deny,
        )
    }
}

/// A rule that is neither a network, an address, a host name nor `*.domain`.
#[derive(Debug, thiserror::Error)]
#[error(
    "{rule:?} is not a fetch rule: give a network (10.0.0.0/8, fd00::/8), an address \
     (169.254.169.254), a host name (metadata.google.internal) or a domain's subdomains \
     (*.internal)"
)]
pub struct RuleError {
    /// The rule as given.
    pub rule: String,
}

/// The rules built into every policy, with why.
const BUILTIN_DENIED: [(&str, &str); 7] = [
    (
        "169.254.0.0/16",
        "link-local, where cloud metadata services answer",
    ),
    ("fe80::/10", "link-local"),
    ("fd00:ec2::254/128", "AWS's metadata service over IPv6"),
    ("100.100.100.200/32", "Alibaba Cloud's metadata service"),
    (
        "0.0.0.0/8",
        "unspecified: Linux connects it to this machine",
    ),
    ("::/128", "unspecified: Linux connects it to this machine"),
    (
        "metadata.google.internal",
        "Google Cloud's metadata service",
    ),
];

/// A host name as rules compare it: lowercase, without a trailing dot.
fn normal_name(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether `name` is a host name: dot-separated labels of letters, digits, `-` and `_`.
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Parses one rule's target: `10.0.0.0/8`, `::1`, `[::1]`, `host.name` or `*.domain`.
///
/// # Errors
/// [`RuleError`] for anything else.
pub fn parse_target(text: &str) -> Result<Target, RuleError> {
    let error = || RuleError {
        rule: text.to_owned(),
    };
    let trimmed = text.trim();
    let bare = match trimmed.strip_prefix('[') {
        Some(rest) => rest.replacen(']', "", 1),
        None => trimmed.to_owned(),
    };
    if let Ok(net) = bare.parse::<IpNet>() {
        return Ok(Target::Net(net.trunc()));
    }
    if let Ok(addr) = bare.parse::<IpAddr>() {
        return Ok(Target::Net(IpNet::from(addr.to_canonical())));
    }
    let name = normal_name(trimmed);
    if let Some(domain) = name.strip_prefix("*.") {
        return is_host_name(domain)
            .then(|| Target::Subdomains(domain.to_owned()))
            .ok_or_else(error);
    }
    if name.bytes().all(|b| b.is_ascii_digit() || b == b'.') || !is_host_name(&name) {
        return Err(error());
    }
    Ok(Target::Name(name))
}

/// What a host name's rules say of a fetch.
#[derive(Debug, PartialEq, Eq)]
pub enum NameVerdict<'a> {
    /// An allow rule matches the name: its addresses are not checked.
    Allowed,
    /// A deny rule matches the name.
    Denied(&'a Rule),
    /// No name rule matches: the addresses decide.
    Addresses,
}

/// The egress policy: the built-in rules and the operator's. Cheap to share behind an `Arc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchPolicy {
    rules: Vec<Rule>,
}

impl Default for FetchPolicy {
    /// The built-in rules alone.
    fn default() -> Self {
        // Every built-in rule parses (a test checks that none is dropped here).
        let rules = BUILTIN_DENIED
            .iter()
            .filter_map(|(target, why)| {
                Some(Rule {
                    target: parse_target(target).ok()?,
                    verdict: Verdict::Deny,
                    builtin: Some(why),
                })
            })
            .collect();
        Self { rules }
    }
}

impl FetchPolicy {
    /// The built-in rules with the operator's `allow` and `deny` rules
    /// (`--fetch-allow`/`--fetch-deny`, the TOML's `[fetch]`).
    ///
    /// # Errors
    /// [`RuleError`] for the first rule that does not parse.
    pub fn new(allow: &[String], deny: &[String]) -> Result<Self, RuleError> {
        let mut policy = Self::default();
        for (rules, verdict) in [(allow, Verdict::Allow), (deny, Verdict::Deny)] {
            for rule in rules {
                policy.rules.push(Rule {
                    target: parse_target(rule)?,
                    verdict,
                    builtin: None,
                });
            }
        }
        Ok(policy)
    }

    /// Every rule, the built-in ones first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// What the name rules say of a fetch from `host` (a host name, not an address).
    pub fn check_name(&self, host: &str) -> NameVerdict<'_> {
        let host = normal_name(host);
        let matching = self.rules.iter().filter(|rule| match &rule.target {
            Target::Name(name) => *name == host,
            Target::Subdomains(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|rest| rest.ends_with('.')),
            Target::Net(_) => false,
        });
        match matching.max_by_key(|rule| rule.rank()) {
            None => NameVerdict::Addresses,
            Some(rule) if rule.verdict == Verdict::Allow => NameVerdict::Allowed,
            Some(rule) => NameVerdict::Denied(rule),
        }
    }

    /// Whether a fetch may connect to `addr` (an IPv4-mapped IPv6 address counts as its IPv4
    /// address).
    ///
    /// # Errors
    /// The deny rule that refuses it.
    pub fn check_addr(&self, addr: IpAddr) -> Result<(), &Rule> {
        let addr = addr.to_canonical();
        let deciding = self
            .rules
            .iter()
            .filter(|rule| matches!(&rule.target, Target::Net(net) if net.contains(&addr)))
            .max_by_key(|rule| rule.rank());
        match deciding {
            Some(rule) if rule.verdict == Verdict::Deny => Err(rule),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_rule_parses() {
        assert_eq!(FetchPolicy::default().rules.len(), BUILTIN_DENIED.len());
    }

    fn policy(allow: &[&str], deny: &[&str]) -> FetchPolicy {
        let owned = |rules: &[&str]| rules.iter().map(|r| (*r).to_owned()).collect::<Vec<_>>();
        FetchPolicy::new(&owned(allow), &owned(deny)).unwrap()
    }

    fn allowed(policy: &FetchPolicy, addr: &str) -> bool {
        policy.check_addr(addr.parse().unwrap()).is_ok()
    }

    #[test]
    fn link_local_metadata_and_unspecified_addresses_are_denied_by_default() {
        let p = FetchPolicy::default();
        for denied in [
            "169.254.169.254",
            "169.254.170.2",
            "fe80::1",
            "fd00:ec2::254",
            "100.100.100.200",
            "0.0.0.0",
            "::",
            "::ffff:169.254.169.254",
        ] {
            assert!(!allowed(&p, denied), "{denied}");
        }
        for open in ["127.0.0.1", "10.1.2.3", "8.8.8.8", "::1", "2001:db8::1"] {
            assert!(allowed(&p, open), "{open}");
        }
        let NameVerdict::Denied(rule) = p.check_name("Metadata.Google.Internal.") else {
            panic!("the metadata name is denied");
        };
        assert_eq!(
            rule.to_string(),
            "the built-in deny of metadata.google.internal (Google Cloud's metadata service)"
        );
        assert_eq!(p.check_name("example.com"), NameVerdict::Addresses);
    }

    #[test]
    fn the_longest_prefix_decides_and_the_operator_wins_ties() {
        let p = policy(
            &["10.1.0.0/16", "169.254.0.0/16"],
            &["10.0.0.0/8", "10.1.2.0/24"],
        );
        assert!(!allowed(&p, "10.9.9.9"));
        assert!(allowed(&p, "10.1.9.9"));
        assert!(!allowed(&p, "10.1.2.3"));
        assert!(
            allowed(&p, "169.254.169.254"),
            "the operator's allow beats the built-in"
        );
        let denied = policy(&["127.0.0.0/8"], &["127.0.0.0/8"]);
        let rule = denied.check_addr("127.0.0.1".parse().unwrap()).unwrap_err();
        assert_eq!(rule.to_string(), "--fetch-deny 127.0.0.0/8");
        let everything = policy(&["192.0.2.7"], &["0.0.0.0/0", "::/0"]);
        assert!(allowed(&everything, "192.0.2.7"));
        assert!(!allowed(&everything, "192.0.2.8"));
        assert!(!allowed(&everything, "::ffff:192.0.2.8"));
    }

    #[test]
    fn names_decide_before_addresses_the_exact_before_the_suffix() {
        let p = policy(
            &["files.corp.internal"],
            &["*.internal", "*.corp.internal", "evil.example"],
        );
        assert_eq!(p.check_name("files.corp.internal"), NameVerdict::Allowed);
        let NameVerdict::Denied(rule) = p.check_name("db.corp.internal") else {
            panic!("a subdomain is denied");
        };
        assert_eq!(rule.to_string(), "--fetch-deny *.corp.internal");
        assert!(matches!(
            p.check_name("EVIL.example"),
            NameVerdict::Denied(_)
        ));
        assert_eq!(p.check_name("internal"), NameVerdict::Addresses);
        assert_eq!(p.check_name("notinternal"), NameVerdict::Addresses);
    }

    #[test]
    fn rules_parse_as_networks_addresses_names_or_subdomains() {
        let net = |s: &str| Target::Net(s.parse().unwrap());
        assert_eq!(parse_target("10.1.2.3/8").unwrap(), net("10.0.0.0/8"));
        assert_eq!(parse_target("::1").unwrap(), net("::1/128"));
        assert_eq!(parse_target("[fe80::]/10").unwrap(), net("fe80::/10"));
        assert_eq!(parse_target("::ffff:10.0.0.1").unwrap(), net("10.0.0.1/32"));
        assert_eq!(
            parse_target("Files.Example.").unwrap(),
            Target::Name("files.example".into())
        );
        assert_eq!(
            parse_target("*.internal").unwrap(),
            Target::Subdomains("internal".into())
        );
        for bad in [
            "",
            "10.0.0.0/33",
            "1.2.3",
            "*.",
            "a..b",
            "http://x",
            "*.*.x",
            "a b",
        ] {
            let e = parse_target(bad).unwrap_err().to_string();
            assert!(e.contains("is not a fetch rule"), "{bad}: {e}");
        }
        assert_eq!(parse_target("192.0.2.7").unwrap().to_string(), "192.0.2.7");
    }
}
