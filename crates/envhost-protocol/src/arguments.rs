//! Tool arguments brought to their input schema's types as the reference's MCP server brings
//! them (protocol.md#tool-arguments), before they are validated.
//!
//! The reference's FastMCP first parses an argument sent as JSON text for a parameter that is not
//! a plain string (`"[1, 2]"` for a list, `"null"` for an optional value), keeping the text when
//! it parses to a string or a number. pydantic, in its lax mode, then turns numerals into
//! integers and floats (`"2"`, `" -2.0 "`, `"1_000"`, `"1e3"` for a float), integral floats and
//! booleans into integers, the words `true`/`yes`/`on`/`t`/`y`/`1` and their opposites (any
//! case) and the numbers 0 and 1 into booleans, everywhere in the value (list items, object
//! properties, definitions), choosing among the branches of an `anyOf` the one the value already
//! is, else the first it can become. A value it cannot bring to its type is left as it was, for
//! the validator to refuse.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

/// A tool's input schema (pydantic's form, its `$defs` included) compiled once into what
/// [`ArgumentTypes::coerce`] needs: each parameter's type, and whether FastMCP pre-parses it.
/// Each definition is compiled once, however often (or recursively) it is referred to.
#[derive(Debug, Default)]
pub struct ArgumentTypes {
    parameters: HashMap<String, Parameter>,
    definitions: Vec<Node>,
}

#[derive(Debug)]
struct Parameter {
    node: Node,
    /// Not a plain string: JSON text for it is pre-parsed.
    pre_parse: bool,
}

/// A schema's type.
#[derive(Debug)]
enum Node {
    Integer,
    Number,
    Boolean,
    String,
    Null,
    Array {
        prefix: Vec<Node>,
        items: Option<Box<Node>>,
    },
    Object {
        properties: HashMap<String, Node>,
        additional: Option<Box<Node>>,
    },
    AnyOf(Vec<Node>),
    /// A definition, by its index in [`ArgumentTypes::definitions`].
    Definition(usize),
    /// No type constraint (or one this module does not convert to).
    Any,
}

/// How many definitions naming only another are followed before a type is taken as none.
const MAX_ALIASES: usize = 8;

impl ArgumentTypes {
    /// Compiles `schema`, a tool's input schema. A schema without `properties` compiles to
    /// types that convert nothing; a `$ref` to anything but one of its `$defs` to no type.
    pub fn new(schema: &Map<String, Value>) -> Self {
        let defs = schema.get("$defs").and_then(Value::as_object);
        let names: HashMap<&str, usize> = defs
            .map(|d| d.keys().enumerate().map(|(i, k)| (k.as_str(), i)).collect())
            .unwrap_or_default();
        let definitions = defs
            .map(|d| d.values().map(|v| Node::compile(v, &names)).collect())
            .unwrap_or_default();
        let parameters = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| {
                        let node = Node::compile(property, &names);
                        (name.clone(), node)
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let mut types = Self {
            parameters: HashMap::new(),
            definitions,
        };
        for (name, node) in parameters {
            let pre_parse = !matches!(types.resolve(&node), Node::String);
            types.parameters.insert(name, Parameter { node, pre_parse });
        }
        types
    }

    /// Brings `arguments` to these types in place, as described in the module documentation.
    /// Arguments the schema does not name are left alone.
    pub fn coerce(&self, arguments: &mut Map<String, Value>) {
        for (name, value) in arguments.iter_mut() {
            let Some(parameter) = self.parameters.get(name) else {
                continue;
            };
            if parameter.pre_parse {
                pre_parse(value);
            }
            self.fit(&parameter.node, value);
        }
    }

    /// `node` with definitions that name only another followed.
    fn resolve<'a>(&'a self, mut node: &'a Node) -> &'a Node {
        for _ in 0..MAX_ALIASES {
            match node {
                Node::Definition(index) => node = &self.definitions[*index],
                _ => return node,
            }
        }
        &Node::Any
    }

    /// Brings `value` to `node`'s type in place where pydantic's lax mode would; true when it
    /// now has that type (or there is none).
    fn fit(&self, node: &Node, value: &mut Value) -> bool {
        match self.resolve(node) {
            Node::Integer => to_integer(value),
            Node::Number => to_number(value),
            Node::Boolean => to_boolean(value),
            Node::String => value.is_string(),
            Node::Null => value.is_null(),
            Node::Any | Node::Definition(_) => true,
            Node::Array { prefix, items } => {
                let Value::Array(values) = value else {
                    return false;
                };
                for (index, item) in values.iter_mut().enumerate() {
                    if let Some(node) = prefix.get(index).or(items.as_deref()) {
                        self.fit(node, item);
                    }
                }
                true
            }
            Node::Object {
                properties,
                additional,
            } => {
                let Value::Object(object) = value else {
                    return false;
                };
                for (name, property_value) in object.iter_mut() {
                    if let Some(node) = properties.get(name).or(additional.as_deref()) {
                        self.fit(node, property_value);
                    }
                }
                true
            }
            Node::AnyOf(branches) => {
                if let Some(exact) = branches.iter().find(|b| self.is(b, value)) {
                    return self.fit(exact, value);
                }
                for branch in branches {
                    let mut trial = value.clone();
                    if self.fit(branch, &mut trial) {
                        *value = trial;
                        return true;
                    }
                }
                false
            }
        }
    }

    /// Whether `value` is already of `node`'s type, as pydantic's smart union checks a branch
    /// before trying to convert to any (an integer is a number; a float is not an integer).
    fn is(&self, node: &Node, value: &Value) -> bool {
        match self.resolve(node) {
            Node::Integer => value.is_i64() || value.is_u64(),
            Node::Number => value.is_number(),
            Node::Boolean => value.is_boolean(),
            Node::String => value.is_string(),
            Node::Null => value.is_null(),
            Node::Array { .. } => value.is_array(),
            Node::Object { .. } => value.is_object(),
            Node::AnyOf(_) => false,
            Node::Any | Node::Definition(_) => true,
        }
    }
}

/// FastMCP's pre-parsing of a top-level argument for a parameter that is not a plain string:
/// JSON text becomes the value it encodes, unless that is a string or a number (a boolean
/// counts as a number in Python).
fn pre_parse(value: &mut Value) {
    let Value::String(text) = value else {
        return;
    };
    if let Ok(parsed @ (Value::Array(_) | Value::Object(_) | Value::Null)) =
        serde_json::from_str::<Value>(text)
    {
        *value = parsed;
    }
}

impl Node {
    /// `schema` compiled, a `$ref` to one of `definitions` (by name) kept as a reference.
    fn compile(schema: &Value, definitions: &HashMap<&str, usize>) -> Self {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            return reference
                .strip_prefix("#/$defs/")
                .and_then(|name| definitions.get(name))
                .map_or(Self::Any, |index| Self::Definition(*index));
        }
        let compile = |s: &Value| Self::compile(s, definitions);
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            return Self::AnyOf(branches.iter().map(compile).collect());
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("integer") => Self::Integer,
            Some("number") => Self::Number,
            Some("boolean") => Self::Boolean,
            Some("string") => Self::String,
            Some("null") => Self::Null,
            Some("array") => Self::Array {
                prefix: schema
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map(|items| items.iter().map(compile).collect())
                    .unwrap_or_default(),
                items: schema
                    .get("items")
                    .filter(|items| items.is_object())
                    .map(|items| Box::new(compile(items))),
            },
            Some("object") => Self::Object {
                properties: schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.iter().map(|(k, v)| (k.clone(), compile(v))).collect())
                    .unwrap_or_default(),
                additional: schema
                    .get("additionalProperties")
                    .filter(|extra| extra.is_object())
                    .map(|extra| Box::new(compile(extra))),
            },
            _ => Self::Any,
        }
    }
}

/// pydantic's lax integer: an integer; a float with no fraction; a boolean; a numeral (Python's
/// whitespace around it, `_` between digits, an all-zero fraction).
fn to_integer(value: &mut Value) -> bool {
    let integer = match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => return true,
        Value::Number(n) => n.as_f64().and_then(integral),
        Value::Bool(b) => Some(Number::from(i64::from(*b))),
        Value::String(text) => integer_numeral(text),
        _ => None,
    };
    replace_with_number(value, integer)
}

/// pydantic's lax float: a number; a boolean; a finite numeral as Python's `float` reads one.
fn to_number(value: &mut Value) -> bool {
    let number = match value {
        Value::Number(_) => return true,
        Value::Bool(b) => Number::from_f64(if *b { 1.0 } else { 0.0 }),
        Value::String(text) => float_numeral(text).and_then(Number::from_f64),
        _ => None,
    };
    replace_with_number(value, number)
}

fn replace_with_number(value: &mut Value, number: Option<Number>) -> bool {
    match number {
        Some(number) => {
            *value = Value::Number(number);
            true
        }
        None => false,
    }
}

/// pydantic's lax boolean: a boolean; 0 or 1 (integer or float); one of its words, any case.
fn to_boolean(value: &mut Value) -> bool {
    let boolean = match value {
        Value::Bool(_) => return true,
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::String(text) => match text.to_ascii_lowercase().as_str() {
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    };
    match boolean {
        Some(b) => {
            *value = Value::Bool(b);
            true
        }
        None => false,
    }
}

/// A float with no fraction, as an integer when it is within `i64`'s range.
fn integral(x: f64) -> Option<Number> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    (x.fract() == 0.0 && (-LIMIT..LIMIT).contains(&x)).then(|| Number::from(x as i64))
}

/// `text` as pydantic reads an integer: trimmed, an optional sign, digits with single `_`
/// between them, and an optional `.` followed by zeros only.
fn integer_numeral(text: &str) -> Option<Number> {
    let text = text.trim();
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (text, None),
    };
    if fraction.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b == b'0')) {
        return None;
    }
    let (negative, digits) = match whole.as_bytes().first() {
        Some(b'-') => (true, &whole[1..]),
        Some(b'+') => (false, &whole[1..]),
        _ => (false, whole),
    };
    let digits = digit_run(digits)?;
    if negative {
        format!("-{digits}").parse::<i64>().ok().map(Number::from)
    } else {
        digits.parse::<u64>().ok().map(Number::from)
    }
}

/// `text` as Python's `float` reads a finite numeral: trimmed, an optional sign, digits (with
/// single `_` between them) with an optional fraction or a fraction alone, and an optional
/// exponent. `inf` and `nan` have no JSON number and are not read.
fn float_numeral(text: &str) -> Option<f64> {
    let text = text.trim();
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let whole_ok = whole.is_empty() || digit_run(whole).is_some();
    let fraction_ok = fraction.is_none_or(|f| f.is_empty() || digit_run(f).is_some());
    let has_digits = !whole.is_empty() || fraction.is_some_and(|f| !f.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        digit_run(e).is_some()
    });
    if !(whole_ok && fraction_ok && has_digits && exponent_ok) {
        return None;
    }
    let x: f64 = text.replace('_', "").parse().ok()?;
    x.is_finite().then_some(x)
}

/// `text` without its `_`s when it is ASCII digits with single `_`s between them.
fn digit_run(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let well_formed = !bytes.is_empty()
        && bytes.first().is_some_and(u8::is_ascii_digit)
        && bytes.last().is_some_and(u8::is_ascii_digit)
        && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'_')
        && !text.contains("__");
    well_formed.then(|| text.replace('_', ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn coerced(schema: Value, arguments: Value) -> Value {
        let (Value::Object(schema), Value::Object(mut arguments)) = (schema, arguments) else {
            panic!("objects expected");
        };
        ArgumentTypes::new(&schema).coerce(&mut arguments);
        Value::Object(arguments)
    }

    fn one(property: Value, value: Value) -> Value {
        coerced(
            json!({"properties": {"x": property}, "type": "object"}),
            json!({ "x": value }),
        )["x"]
            .clone()
    }

    #[test]
    fn integers_are_read_as_pydantic_reads_them() {
        let int = json!({"type": "integer"});
        for (given, expected) in [
            (json!("2"), json!(2)),
            (json!(" -2.0 "), json!(-2)),
            (json!("1_000"), json!(1000)),
            (json!("+3"), json!(3)),
            (json!("2.00"), json!(2)),
            (json!(2.0), json!(2)),
            (json!(true), json!(1)),
            (json!(5), json!(5)),
        ] {
            assert_eq!(one(int.clone(), given.clone()), expected, "{given}");
        }
        for kept in [
            json!("2.5"),
            json!("2."),
            json!("1e3"),
            json!("0x10"),
            json!("1__0"),
            json!("_1"),
            json!("two"),
            json!(2.5),
            json!(null),
            json!("99999999999999999999"),
        ] {
            assert_eq!(one(int.clone(), kept.clone()), kept);
        }
    }

    #[test]
    fn floats_and_booleans_are_read_as_pydantic_reads_them() {
        let float = json!({"type": "number"});
        assert_eq!(one(float.clone(), json!("1e3")), json!(1000.0));
        assert_eq!(one(float.clone(), json!(".5")), json!(0.5));
        assert_eq!(one(float.clone(), json!("5.")), json!(5.0));
        assert_eq!(one(float.clone(), json!(" -.5e-3 ")), json!(-0.0005));
        assert_eq!(one(float.clone(), json!("1_0.5")), json!(10.5));
        assert_eq!(one(float.clone(), json!(false)), json!(0.0));
        for kept in [
            json!("inf"),
            json!("nan"),
            json!("1.5f"),
            json!("."),
            json!("e5"),
        ] {
            assert_eq!(one(float.clone(), kept.clone()), kept);
        }
        let boolean = json!({"type": "boolean"});
        for (given, expected) in [
            ("TRUE", true),
            ("Yes", true),
            ("on", true),
            ("t", true),
            ("1", true),
            ("off", false),
            ("n", false),
            ("0", false),
        ] {
            assert_eq!(
                one(boolean.clone(), json!(given)),
                json!(expected),
                "{given}"
            );
        }
        assert_eq!(one(boolean.clone(), json!(1.0)), json!(true));
        for kept in [json!(" true"), json!("1.0"), json!(2), json!("00")] {
            assert_eq!(one(boolean.clone(), kept.clone()), kept);
        }
    }

    #[test]
    fn a_definition_that_refers_to_itself_compiles_and_converts_to_its_depth() {
        let schema = json!({
            "$defs": {"Tree": {"properties": {
                "size": {"type": "integer"},
                "children": {"items": {"$ref": "#/$defs/Tree"}, "type": "array"}
            }, "type": "object"}},
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "type": "object"
        });
        let arguments = json!({"tree": {"size": "1", "children": [{"size": "2", "children": []}]}});
        assert_eq!(
            coerced(schema, arguments),
            json!({"tree": {"size": 1, "children": [{"size": 2, "children": []}]}})
        );
    }

    #[test]
    fn a_definition_referred_to_twice_at_every_level_compiles_once() {
        let schema = json!({
            "$defs": {"Pair": {"properties": {
                "left": {"$ref": "#/$defs/Pair"}, "right": {"$ref": "#/$defs/Pair"}, "n": {"type": "integer"}
            }, "type": "object"}},
            "properties": {"pair": {"$ref": "#/$defs/Pair"}},
            "type": "object"
        });
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        let started = std::time::Instant::now();
        let types = ArgumentTypes::new(&schema);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let mut arguments = json!({"pair": {"n": "1", "left": {"n": "2"}}});
        let Value::Object(ref mut map) = arguments else {
            unreachable!()
        };
        types.coerce(map);
        assert_eq!(arguments, json!({"pair": {"n": 1, "left": {"n": 2}}}));
    }

    #[test]
    fn a_definition_naming_only_itself_converts_nothing() {
        let schema = json!({
            "$defs": {"Loop": {"$ref": "#/$defs/Loop"}},
            "properties": {"x": {"$ref": "#/$defs/Loop"}, "y": {"$ref": "#/elsewhere"}},
            "type": "object"
        });
        assert_eq!(
            coerced(schema, json!({"x": "1", "y": "2"})),
            json!({"x": "1", "y": "2"})
        );
    }

    #[test]
    fn strings_are_never_converted() {
        let string = json!({"type": "string"});
        assert_eq!(one(string.clone(), json!(2)), json!(2));
        assert_eq!(one(string, json!("[1]")), json!("[1]"));
    }

    #[test]
    fn a_union_keeps_a_branch_the_value_is_else_takes_the_first_it_can_become() {
        let optional_int =
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null});
        assert_eq!(one(optional_int.clone(), json!("2")), json!(2));
        assert_eq!(one(optional_int.clone(), json!(null)), json!(null));
        assert_eq!(one(optional_int, json!("null")), json!(null));
        let int_or_str = json!({"anyOf": [{"type": "integer"}, {"type": "string"}]});
        assert_eq!(one(int_or_str, json!("2")), json!("2"));
        let bool_or_int = json!({"anyOf": [{"type": "boolean"}, {"type": "integer"}]});
        assert_eq!(one(bool_or_int.clone(), json!("1")), json!(true));
        assert_eq!(one(bool_or_int, json!(1)), json!(1));
    }

    #[test]
    fn json_text_for_a_container_is_parsed_and_its_items_converted() {
        let list = json!({"items": {"type": "integer"}, "type": "array"});
        assert_eq!(
            one(list.clone(), json!("[\"1\", 2.0, true]")),
            json!([1, 2, 1])
        );
        assert_eq!(one(list, json!("7")), json!("7"));
        let schema = json!({
            "$defs": {"Note": {"properties": {"id": {"type": "integer"}}, "type": "object"}},
            "properties": {
                "note": {"$ref": "#/$defs/Note"},
                "scores": {"additionalProperties": {"type": "number"}, "type": "object"},
                "pair": {"prefixItems": [{"type": "integer"}, {"type": "boolean"}], "type": "array"}
            },
            "type": "object"
        });
        let arguments = json!({
            "note": "{\"id\": \"4\"}",
            "scores": {"a": "1.5"},
            "pair": ["3", "yes"],
            "unknown": "5"
        });
        assert_eq!(
            coerced(schema, arguments),
            json!({"note": {"id": 4}, "scores": {"a": 1.5}, "pair": [3, true], "unknown": "5"})
        );
    }
}
