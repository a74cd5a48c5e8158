//! The `serving` capability: `agentenv:environment/serving`, changes to what the host serves an
//! episode, made by its guest while it runs (protocol.md#tool-updates): `update-tool` changes a
//! tool's description for the episode. The changes live beside the episode's instances, so a
//! rebuild or a replay of the journal makes them again as the guest does.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use wasmtime::component::{HasSelf, Linker};

use crate::bindings::agentenv::environment::serving;

/// The token a declared tool name holds where the served name has the environment's name.
const NAME_TOKEN: &str = "{environment_name}";

/// An episode's tool descriptions as its guest changed them, by declared name. Clones share them.
#[derive(Clone, Debug, Default)]
pub struct Descriptions(Arc<Mutex<BTreeMap<String, String>>>);

impl Descriptions {
    /// The descriptions changed so far; none when no tool's was.
    pub fn changed(&self) -> Option<BTreeMap<String, String>> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        (!map.is_empty()).then(|| map.clone())
    }

    /// Takes the changes in `changed` too.
    pub(crate) fn extend(&self, changed: Option<&BTreeMap<String, String>>) {
        if let Some(changed) = changed {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(changed.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }

    fn set(&self, declared: &str, description: String) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(declared.to_owned(), description);
    }
}

/// Whether `name` is the tool declared as `declared`: the same, or with `{environment_name}`
/// stood for by a name.
fn names(declared: &str, name: &str) -> bool {
    match declared.split_once(NAME_TOKEN) {
        None => declared == name,
        Some((prefix, suffix)) => {
            declared == name
                || (name.len() > prefix.len() + suffix.len()
                    && name.starts_with(prefix)
                    && name.ends_with(suffix))
        }
    }
}

/// The `serving` capability's state in a store: the episode's descriptions and its tools'
/// declared names.
#[derive(Default)]
pub struct Serving {
    descriptions: Descriptions,
    declared: Arc<[String]>,
}

impl Serving {
    /// Changes go to `descriptions`, for the tools declared as `declared`.
    pub(crate) fn new(descriptions: Descriptions, declared: Arc<[String]>) -> Self {
        Self {
            descriptions,
            declared,
        }
    }
}

impl serving::Host for Serving {
    fn update_tool(&mut self, name: String, description: String) -> Result<(), String> {
        let declared = self
            .declared
            .iter()
            .find(|d| names(d, &name))
            .ok_or_else(|| format!("no served tool is named {name:?}"))?;
        self.descriptions.set(declared, description);
        Ok(())
    }
}

/// Adds `agentenv:environment/serving` to `linker`, answered from the [`Serving`] that `get`
/// finds in the store's data.
///
/// # Errors
/// wasmtime's, when the interface is defined twice.
pub fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Serving,
) -> wasmtime::Result<()> {
    serving::add_to_linker::<T, HasSelf<Serving>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serving::Host as _;

    #[test]
    fn a_tool_is_found_by_its_declared_or_served_name() {
        let descriptions = Descriptions::default();
        let declared: Arc<[String]> =
            vec!["{environment_name}_send".to_owned(), "ping".into()].into();
        let mut state = Serving::new(descriptions.clone(), declared);
        assert_eq!(descriptions.changed(), None);
        state
            .update_tool("slack_send".into(), "Send.".into())
            .unwrap();
        state.update_tool("ping".into(), "Ping.".into()).unwrap();
        assert!(state.update_tool("_send".into(), "x".into()).is_err());
        assert!(state.update_tool("pong".into(), "x".into()).is_err());
        let changed = descriptions.changed().unwrap();
        assert_eq!(changed["{environment_name}_send"], "Send.");
        assert_eq!(changed["ping"], "Ping.");
    }
}
