//! The Agent Handler conformance suite (fastagent's `test/spec-conformance.ts` in Rust, plus the
//! host's own checks), run on a slack episode with a Chat Completions server on loopback as the
//! model (`envhost_tests::model`).
//!
//! The spec's checks ([`spec`]) are written once for a [`Subject`](rig::Subject), an agent put in
//! the postures the checks need (`completing`: the model answers text; `failing`: it answers an
//! error status; `hanging`: it never finishes; `pair`: two hosts sharing only the session
//! store), and run by `spec_suite!` for each example agent: `rust::` is `guests/tool-agent`,
//! `javascript::` is `guests/tool-agent-js`. The host's checks ([`host`]) use
//! `guests/conformance-agent`, whose prompt picks what it does.
//!
//! Which test checks what (`*` is `rust` and `javascript`; "row" is a row of the conformance
//! table):
//!
//! - MUST 1, exactly one terminal:
//!   - `*::must_1_exactly_one_terminal_when_completing` (row 1);
//!   - `*::must_1_exactly_one_terminal_after_tool_calls` (row 14: the host's `tool_started` /
//!     `tool_ended` with the call's id, `isError` on the failing call, the turn completing);
//!   - `host::must_1_and_2_the_guests_answer_is_the_one_terminal`.
//! - MUST 2, failures are `failed` events:
//!   - `*::must_2_failures_are_failed_events_with_the_model_error_kinds` (rows 2 and 17: 429
//!     and 503 retryable, 400 not; the agent's own `turn_limit`);
//!   - `host::must_1_and_2_the_guests_answer_is_the_one_terminal` (the guest's err).
//! - MUST 3, cancellation:
//!   - `*::must_3_cancellation_drops_the_instance_and_closes_the_model_request` (row 3);
//!   - `*::row_16_a_quiet_stream_pings_and_a_leaving_client_cancels` (over HTTP);
//!   - `host::row_9_a_spin_is_deadline_exceeded_or_stopped_when_its_consumer_leaves`.
//! - MUST 4, a terminal consumer ignores unknown events:
//!   `host::must_4_a_terminal_consumer_ignores_unknown_events` (row 11).
//! - MUST 5, a relay passes them on unchanged:
//!   `host::must_5_unknown_events_are_relayed_unchanged` (row 11).
//! - MUST 6, no location dependence: `*::must_6_a_session_continues_on_another_instance`
//!   (row 5).
//! - Row 4, events are JSON: `*::row_4_every_event_is_json_on_both_paths`.
//! - Row 6, an instance that cannot start:
//!   `*::row_6_an_instance_that_cannot_start_is_one_failed_event_not_a_500` (a component that
//!   cannot be linked is refused when the host loads it, before any turn).
//! - Row 7, a consumer gone before the model is called:
//!   `*::row_7_a_consumer_that_leaves_at_once_never_calls_the_model`.
//! - Row 8, a trap: `host::row_8_a_trap_is_agent_trap_after_the_text_before_it`.
//! - Row 9, a spin: `host::row_9_a_spin_is_deadline_exceeded_or_stopped_when_its_consumer_leaves`.
//! - Row 10, reserved names and bad JSON:
//!   `host::row_10_a_reserved_name_or_bad_json_is_a_protocol_violation`.
//! - Row 12, thinking is not text: `*::row_12_collect_answers_the_text_without_the_thinking`.
//! - Row 13, `collect` and the buffered answer: `host::row_13_collect_and_the_buffered_answer`
//!   (not a turn without a terminal: only a consumer that has left ends a turn so, and then
//!   nothing collects it).
//! - Row 15, `session_busy`: `*::row_15_a_busy_session_fails_at_once_and_other_sessions_run`,
//!   and over HTTP `*::row_16_a_quiet_stream_pings_and_a_leaving_client_cancels`.
//! - Row 16, HTTP: `host::row_16_http_refusals` (405 with `Allow: POST`, 415, 413 by bytes, 400,
//!   404) and `*::row_16_a_quiet_stream_pings_and_a_leaving_client_cancels`
//!   (`text/event-stream`, `data:` frames, `: ping`).
//!
//! Bounds asserted: a cancelled turn's model request is closed within
//! [`spec::MODEL_CLOSED_WITHIN`] (500 ms), its session free again within
//! [`spec::FREED_WITHIN`] (one epoch tick, `envhost::runtime::EPOCH_TICK`, plus 5 ms of
//! scheduling slack).

mod host;
mod rig;
mod spec;

/// The spec's checks for the example agent whose component is `$component`, in module
/// `$subject`.
macro_rules! spec_suite {
    ($subject:ident, $component:literal) => {
        mod $subject {
            use crate::rig::Subject;
            use crate::spec;

            fn subject() -> Subject {
                Subject::new($component)
            }

            #[tokio::test]
            async fn must_1_exactly_one_terminal_when_completing() {
                spec::must_1_completing(&subject()).await;
            }

            #[tokio::test]
            async fn must_1_exactly_one_terminal_after_tool_calls() {
                spec::must_1_after_tool_calls(&subject()).await;
            }

            #[tokio::test]
            async fn must_2_failures_are_failed_events_with_the_model_error_kinds() {
                spec::must_2_model_errors(&subject()).await;
            }

            #[tokio::test]
            async fn must_3_cancellation_drops_the_instance_and_closes_the_model_request() {
                spec::must_3_cancellation(&subject()).await;
            }

            #[tokio::test]
            async fn must_6_a_session_continues_on_another_instance() {
                spec::must_6_pair(&subject(), stringify!($subject)).await;
            }

            #[tokio::test]
            async fn row_4_every_event_is_json_on_both_paths() {
                spec::row_4_events_are_json(&subject()).await;
            }

            #[tokio::test]
            async fn row_6_an_instance_that_cannot_start_is_one_failed_event_not_a_500() {
                spec::row_6_start_failure(&subject()).await;
            }

            #[tokio::test]
            async fn row_7_a_consumer_that_leaves_at_once_never_calls_the_model() {
                spec::row_7_left_before_the_model(&subject()).await;
            }

            #[tokio::test]
            async fn row_12_collect_answers_the_text_without_the_thinking() {
                spec::row_12_thinking_is_not_text(&subject()).await;
            }

            #[tokio::test]
            async fn row_15_a_busy_session_fails_at_once_and_other_sessions_run() {
                spec::row_15_session_busy(&subject()).await;
            }

            #[tokio::test]
            async fn row_16_a_quiet_stream_pings_and_a_leaving_client_cancels() {
                spec::row_16_stream(&subject()).await;
            }
        }
    };
}

spec_suite!(rust, "tool_agent");
spec_suite!(javascript, "tool-agent-js");
