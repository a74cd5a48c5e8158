//! A `POST /agentenv` body read both ways: the one-pass `data/add` reader
//! (`jsonrpc::parse_add_request`) must answer exactly what the general route answers
//! (`jsonrpc::parse_request`, then `part::parts_from_add_params`) whenever it answers at all,
//! and neither may panic.
#![no_main]

use envhost_protocol::description::Operation;
use envhost_protocol::jsonrpc::{parse_add_request, parse_request};
use envhost_protocol::part::parts_from_add_params;
use libfuzzer_sys::fuzz_target;

const SERVED: [Operation; 3] = [Operation::Reset, Operation::Add, Operation::Get];

fuzz_target!(|body: &[u8]| {
    let general = parse_request(body, &SERVED);
    let Some((id, parts)) = parse_add_request(body) else {
        return;
    };
    let request = general.unwrap_or_else(|e| {
        panic!("the one-pass reader took a body the general route refuses: {e:?}")
    });
    assert_eq!(request.operation, Operation::Add);
    assert_eq!(request.id, id);
    let general_parts =
        parts_from_add_params(&request.params).expect("the general route refuses the parts");
    assert_eq!(general_parts, parts);
});
