//! A deployment's A2A tasks (docs/agent-env.md#tasks): each one turn of the agent, its state,
//! history and artifacts as A2A 0.3.0 writes them, the turn's events (its trajectory), and the
//! streams watching it. A task's updates are applied here and handed to every watcher in
//! order; a terminal one ends the watches.

use std::collections::{HashMap, VecDeque};

use a2a_types::{
    Artifact, Message, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// The most finished tasks a deployment keeps; the oldest is forgotten beyond it.
pub const MAX_FINISHED_TASKS: usize = 1_000;

/// One change of a task, as `message/stream` sends it.
#[derive(Clone, Debug)]
pub enum Update {
    /// A `status-update`.
    Status(TaskStatusUpdateEvent),
    /// An `artifact-update`.
    Artifact(TaskArtifactUpdateEvent),
}

impl Update {
    /// Its JSON, as a stream's `result`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Status(update) => serde_json::to_value(update),
            Self::Artifact(update) => serde_json::to_value(update),
        }
        .unwrap_or(Value::Null)
    }
}

/// Whether `state` ends a task.
pub fn is_terminal(state: &TaskState) -> bool {
    matches!(
        state,
        TaskState::Completed | TaskState::Canceled | TaskState::Failed | TaskState::Rejected
    )
}

/// The time now as a2a-sdk writes it: ISO 8601 with microseconds and `+00:00`.
pub fn timestamp() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6f+00:00")
        .to_string()
}

/// A task and what watches it.
pub struct Entry {
    /// The task as `tasks/get` answers it.
    pub task: Task,
    /// The turn's events, in order, as the Agent Handler contract writes them.
    pub events: Vec<Value>,
    watchers: Vec<mpsc::UnboundedSender<Update>>,
    /// Stops the turn while it runs.
    stop: Option<oneshot::Sender<()>>,
    /// Its place among the deployment's tasks, in the order they were started.
    order: u64,
}

impl Entry {
    /// A `submitted` task whose turn `stop` stops.
    pub fn new(task: Task, stop: oneshot::Sender<()>) -> Self {
        Self {
            task,
            events: Vec::new(),
            watchers: Vec::new(),
            stop: Some(stop),
            order: 0,
        }
    }

    /// Whether its state is terminal.
    pub fn is_terminal(&self) -> bool {
        is_terminal(&self.task.status.state)
    }
}

/// Why a task could not be canceled.
pub enum CancelError {
    /// No such task.
    NotFound,
    /// It has ended, in this state.
    NotCancelable(TaskState),
}

/// The tasks of one deployment.
#[derive(Default)]
pub struct Tasks {
    by_id: HashMap<String, Entry>,
    finished: VecDeque<String>,
    started: u64,
}

impl Tasks {
    /// How many it keeps.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether it keeps none.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// How many are running.
    pub fn running(&self) -> usize {
        self.by_id.values().filter(|e| !e.is_terminal()).count()
    }

    /// Keeps `entry`.
    pub fn insert(&mut self, mut entry: Entry) {
        self.started += 1;
        entry.order = self.started;
        self.by_id.insert(entry.task.id.clone(), entry);
    }

    /// The task `id`.
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.by_id.get(id)
    }

    /// The tasks of context `context_id`, oldest first.
    pub fn of_context(&self, context_id: &str) -> Vec<&Entry> {
        let mut entries: Vec<&Entry> = self
            .by_id
            .values()
            .filter(|e| e.task.context_id == context_id)
            .collect();
        entries.sort_by_key(|e| e.order);
        entries
    }

    /// Watches task `id`: the task now and, unless it has ended, a stream of its updates from
    /// now on.
    pub fn watch(&mut self, id: &str) -> Option<(Task, Option<mpsc::UnboundedReceiver<Update>>)> {
        let entry = self.by_id.get_mut(id)?;
        if entry.is_terminal() {
            return Some((entry.task.clone(), None));
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        entry.watchers.push(sender);
        Some((entry.task.clone(), Some(receiver)))
    }

    /// Records `event` of task `id`'s turn.
    pub fn record(&mut self, id: &str, event: Value) {
        if let Some(entry) = self.by_id.get_mut(id) {
            entry.events.push(event);
        }
    }

    /// Applies `update` to task `id` and hands it to the task's watchers; a terminal status
    /// ends them. An update to a task that has ended is dropped (a turn canceled under it).
    pub fn publish(&mut self, id: &str, update: Update) {
        let Some(entry) = self.by_id.get_mut(id) else {
            return;
        };
        if entry.is_terminal() {
            return;
        }
        match &update {
            Update::Status(status) => apply_status(&mut entry.task, status.status.clone()),
            Update::Artifact(artifact) => apply_artifact(&mut entry.task, artifact),
        }
        entry
            .watchers
            .retain(|watcher| watcher.send(update.clone()).is_ok());
        if entry.is_terminal() {
            entry.watchers.clear();
            entry.stop = None;
            self.finished.push_back(id.to_owned());
            while self.finished.len() > MAX_FINISHED_TASKS {
                if let Some(oldest) = self.finished.pop_front() {
                    self.by_id.remove(&oldest);
                }
            }
        }
    }

    /// Cancels task `id`: its turn is stopped and its state is `canceled`.
    ///
    /// # Errors
    /// [`CancelError`] for an unknown or ended task.
    pub fn cancel(&mut self, id: &str) -> Result<Task, CancelError> {
        let entry = self.by_id.get_mut(id).ok_or(CancelError::NotFound)?;
        if entry.is_terminal() {
            return Err(CancelError::NotCancelable(entry.task.status.state.clone()));
        }
        if let Some(stop) = entry.stop.take() {
            let _ = stop.send(());
        }
        let context_id = entry.task.context_id.clone();
        let update = TaskStatusUpdateEvent {
            kind: "status-update".into(),
            task_id: id.to_owned(),
            context_id,
            status: TaskStatus {
                state: TaskState::Canceled,
                timestamp: Some(timestamp()),
                message: None,
            },
            is_final: true,
            metadata: None,
        };
        self.publish(id, Update::Status(update));
        Ok(self.by_id[id].task.clone())
    }

    /// Stops every running task (its deployment is being deleted).
    pub fn stop_all(&mut self) {
        for entry in self.by_id.values_mut() {
            if let Some(stop) = entry.stop.take() {
                let _ = stop.send(());
            }
            entry.watchers.clear();
        }
    }
}

/// `task` with `status`: the message of the status it replaces moves to its history.
fn apply_status(task: &mut Task, status: TaskStatus) {
    if let Some(previous) = task.status.message.take() {
        task.history.push(previous);
    }
    task.status = status;
}

/// `task` with `update`'s artifact: appended to the artifact of the same id when `append`,
/// otherwise put in its place (or added).
fn apply_artifact(task: &mut Task, update: &TaskArtifactUpdateEvent) {
    let incoming: &Artifact = &update.artifact;
    match task
        .artifacts
        .iter_mut()
        .find(|a| a.artifact_id == incoming.artifact_id)
    {
        Some(existing) if update.append == Some(true) => {
            existing.parts.extend(incoming.parts.iter().cloned());
        }
        Some(existing) => *existing = incoming.clone(),
        None => task.artifacts.push(incoming.clone()),
    }
}

/// `task` as `tasks/get` answers with `history_length`: only the last that many messages of
/// its history (all of them when it is absent or not above 0).
pub fn with_history_length(mut task: Task, history_length: Option<i32>) -> Task {
    if let Some(keep) = history_length.and_then(|n| usize::try_from(n).ok())
        && keep > 0
        && task.history.len() > keep
    {
        task.history.drain(..task.history.len() - keep);
    }
    task
}

/// An agent message of `parts` in task `task_id` of `context_id`.
pub fn agent_message(task_id: &str, context_id: &str, parts: Vec<a2a_types::Part>) -> Message {
    Message {
        kind: "message".into(),
        message_id: uuid::Uuid::new_v4().to_string(),
        role: a2a_types::MessageRole::Agent,
        parts,
        context_id: Some(context_id.to_owned()),
        task_id: Some(task_id.to_owned()),
        reference_task_ids: Vec::new(),
        extensions: Vec::new(),
        metadata: None,
    }
}
