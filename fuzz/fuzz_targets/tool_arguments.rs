//! Tool arguments brought to an input schema's types (`arguments::ArgumentTypes`): any schema
//! compiles and any arguments convert without a panic, and converting twice changes nothing
//! more than converting once. The input is a schema and arguments, two JSON texts split at the
//! first byte 0xFF.
#![no_main]

use envhost_protocol::arguments::ArgumentTypes;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let mut halves = data.splitn(2, |b| *b == 0xFF);
    let (Some(schema), Some(arguments)) = (halves.next(), halves.next()) else {
        return;
    };
    let Ok(schema) = serde_json::from_slice::<Map<String, Value>>(schema) else {
        return;
    };
    let Ok(mut arguments) = serde_json::from_slice::<Map<String, Value>>(arguments) else {
        return;
    };
    let types = ArgumentTypes::new(&schema);
    types.coerce(&mut arguments);
    let once = arguments.clone();
    types.coerce(&mut arguments);
    assert_eq!(once, arguments, "a second conversion changed the arguments");
});
