//! The ticket desk of `../reference.py`, ported by hand from the reference SDK to envhost's Rust
//! SDK, and served to clients exactly as the reference serves the original. It exercises what the
//! slack example does not: a hook that refuses calls before the tool runs (`#[on_tool_call]`), a
//! mount hook (`#[served]`) that rewrites a tool's description, gives an extension its params and
//! declares `urn:agentenv:intake/v1`, a hidden tool with its `_meta`, a verbatim `ToolResult` with
//! an image, an extension served with `op`s, an argument with a default, and coded errors with
//! hints and statuses.

use envhost_sdk::{
    ContentBlock, EnvError, EnvInfo, ExtensionInfo, ExtensionLayout, ImageContent, Part,
    ToolContext, ToolResult, environment,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

const ADMIN_URI: &str = "urn:example:tickets-admin/v1";
const INTAKE_URI: &str = "urn:agentenv:intake/v1";
/// A 1x1 red PNG: the queue's chart.
const CHART: &[u8] = include_bytes!("chart.png");

const OPEN: &str = "open";
const CLOSED: &str = "closed";

// A ticket; `owner` is the role that opened it. (No doc comment: schemars would make it the
// schema's description, which the reference's TypedDict has none of.)
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Ticket {
    id: i64,
    title: String,
    priority: i64,
    status: &'static str,
    #[schemars(required, schema_with = "nullable_string")]
    owner: Option<String>,
}

/// A string or null that is always present (schemars drops the null of a required `Option`).
fn nullable_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"]})
}

/// The whole state, as `data/get` answers it.
#[derive(Serialize)]
struct Export<'a> {
    tickets: &'a [Ticket],
}

/// The admin extension's `count`.
#[derive(Serialize)]
struct Counts {
    open: usize,
    all: usize,
}

/// The admin extension's answer to `close`.
#[derive(Serialize)]
struct Closed {
    id: i64,
    status: &'static str,
}

/// The desk: its tickets in the order they were opened (ids count from 1).
#[derive(Default)]
pub struct Tickets {
    tickets: Vec<Ticket>,
}

impl Tickets {
    fn ticket_mut(&mut self, id: i64) -> Option<&mut Ticket> {
        self.tickets.iter_mut().find(|t| t.id == id)
    }
}

/// The id of the ticket after `tickets`.
fn next_id(tickets: &[Ticket]) -> i64 {
    i64::try_from(tickets.len()).map_or(i64::MAX, |n| n + 1)
}

fn ticket_not_found(id: i64) -> EnvError {
    EnvError::new("ticket_not_found", format!("no ticket {id}"))
}

#[environment(name = "tickets", tool_access)]
impl Tickets {
    // ------------------------------------------------------------------------ mount hooks

    #[served]
    fn served(info: &mut EnvInfo) {
        for tool in info.tools.iter_mut().filter(|t| t.name.ends_with("_queue")) {
            tool.description = Some("Lists the open tickets, most urgent first.".into());
        }
        for extension in info.extensions.iter_mut().filter(|e| e.uri == ADMIN_URI) {
            extension.params = Some(json!({"max_priority": 5}).to_string());
        }
        info.extensions.push(ExtensionInfo {
            uri: INTAKE_URI.into(),
            description: Some("What data/add takes.".into()),
            params: Some(
                json!({"add": [{"part": "data", "format": "json", "load": "replace"}]}).to_string(),
            ),
            required: None,
            layout: ExtensionLayout::Single,
            methods: Vec::new(),
        });
    }

    #[on_tool_call]
    fn on_tool_call(&mut self, ctx: &ToolContext) -> Option<ToolResult> {
        let reads_the_queue = ctx.tool.as_deref().is_some_and(|t| t.ends_with("_queue"));
        let refused = ctx.caller.role.as_deref() == Some("viewer") && !reads_the_queue;
        refused.then(|| ToolResult {
            content: vec![ContentBlock::Text("viewers may only read the queue".into())],
            structured_content: None,
            is_error: true,
            meta: None,
        })
    }

    // ------------------------------------------------------------------------ data plane

    #[reset]
    fn reset(&mut self) {
        self.tickets.clear();
    }

    /// Replaces the tickets with those of every part, numbered from 1 in order; all or none.
    #[add_data]
    fn add(&mut self, parts: Vec<Part>) -> Result<(), EnvError> {
        let mut tickets = Vec::new();
        for part in parts {
            let Part::Data(part) = part else {
                return Err(invalid("tickets load from data parts only"));
            };
            match part.data.to_map().get("tickets") {
                None => {}
                Some(Value::Array(seeded)) => {
                    for ticket in seeded {
                        let ticket = seeded_ticket(ticket, next_id(&tickets))?;
                        tickets.push(ticket);
                    }
                }
                Some(_) => return Err(invalid("tickets is a list of tickets")),
            }
        }
        self.tickets = tickets;
        Ok(())
    }

    #[get_data]
    fn get(&self) -> Result<Vec<Part>, EnvError> {
        Ok(vec![Part::data_of(&Export {
            tickets: &self.tickets,
        })?])
    }

    // ------------------------------------------------------------------------ tools

    /// Opens a ticket owned by the caller.
    #[tool(
        name = "{environment_name}_open",
        annotations(destructive_hint = false)
    )]
    fn open_ticket(
        &mut self,
        ctx: ToolContext,
        #[arg(description = "What is wrong.")] title: String,
        #[arg(description = "1 (urgent) to 5.", default = 3)] priority: i64,
    ) -> Result<Ticket, EnvError> {
        if !(1..=5).contains(&priority) {
            return Err(EnvError::new(
                "invalid_priority",
                format!("priority {priority} is not between 1 and 5"),
            )
            .hint("use 1 for urgent and 5 for whenever"));
        }
        let ticket = Ticket {
            id: next_id(&self.tickets),
            title,
            priority,
            status: OPEN,
            owner: ctx.caller.role,
        };
        self.tickets.push(ticket.clone());
        Ok(ticket)
    }

    /// Lists the open tickets.
    #[tool(name = "{environment_name}_queue", annotations(read_only_hint = true))]
    fn queue(&self) -> Vec<Ticket> {
        let mut open: Vec<Ticket> = self
            .tickets
            .iter()
            .filter(|t| t.status == OPEN)
            .cloned()
            .collect();
        open.sort_by_key(|t| (t.priority, t.id));
        open
    }

    /// The queue as a chart.
    #[tool(name = "{environment_name}_chart")]
    fn chart(&self) -> ToolResult {
        ToolResult {
            content: vec![
                ContentBlock::Text(format!("{} tickets", self.tickets.len())),
                ContentBlock::Image(ImageContent {
                    data: CHART.to_vec(),
                    mime_type: "image/png".into(),
                }),
            ],
            structured_content: Some(json!({"tickets": self.tickets.len()}).to_string()),
            is_error: false,
            meta: None,
        }
    }

    /// Raises a ticket to priority 1.
    #[tool(
        name = "{environment_name}_escalate",
        hidden_by_default,
        meta = r#"{"example.com/owner": "ops"}"#
    )]
    fn escalate(
        &mut self,
        #[arg(description = "The ticket's id.")] ticket: i64,
    ) -> Result<String, EnvError> {
        let found = self
            .ticket_mut(ticket)
            .ok_or_else(|| ticket_not_found(ticket))?;
        found.priority = 1;
        Ok("escalated".into())
    }

    // ------------------------------------------------------------------------ extension

    #[extension(
        uri = "urn:example:tickets-admin/v1",
        op = "count",
        method = "GET",
        description = "Ticket administration."
    )]
    fn count(&self) -> Counts {
        Counts {
            open: self.tickets.iter().filter(|t| t.status == OPEN).count(),
            all: self.tickets.len(),
        }
    }

    #[extension(uri = "urn:example:tickets-admin/v1", op = "close", method = "POST")]
    fn close(&mut self, ticket: i64) -> Result<Closed, EnvError> {
        let found = self
            .ticket_mut(ticket)
            .ok_or_else(|| ticket_not_found(ticket).status(404))?;
        found.status = CLOSED;
        Ok(Closed {
            id: ticket,
            status: CLOSED,
        })
    }
}

fn invalid(message: &str) -> EnvError {
    EnvError::new("invalid_data", message)
}

/// A ticket of a `data/add` part, as the reference reads one: a `title` (text, or any other value
/// written as JSON), a `priority` (an integer, a number truncated, or a numeral; 3 when left out)
/// and an optional `owner`, opened.
fn seeded_ticket(ticket: &Value, id: i64) -> Result<Ticket, EnvError> {
    let Value::Object(ticket) = ticket else {
        return Err(invalid("a ticket is an object"));
    };
    let title = match ticket.get("title") {
        Some(Value::String(title)) => title.clone(),
        Some(other) => other.to_string(),
        None => return Err(invalid("a ticket needs a title")),
    };
    let priority = match ticket.get("priority") {
        None => 3,
        Some(priority) => integer(priority)
            .ok_or_else(|| invalid(&format!("priority {priority} is not an integer")))?,
    };
    let owner = match ticket.get("owner") {
        None | Some(Value::Null) => None,
        Some(Value::String(owner)) => Some(owner.clone()),
        Some(_) => return Err(invalid("a ticket's owner is a role or null")),
    };
    Ok(Ticket {
        id,
        title,
        priority,
        status: OPEN,
        owner,
    })
}

/// `value` as Python's `int()` reads it: an integer, a number truncated, a numeral, a boolean.
fn integer(value: &Value) -> Option<i64> {
    match value {
        // `as` truncates toward zero, as `int(2.7)` does.
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(numeral) => numeral.trim().parse().ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}
