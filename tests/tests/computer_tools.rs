//! The `computer_*` tools answered by the host around `guests/desk`, in process: frames,
//! crops, spaces, refusals with their codes, the input queue, held keys.

use std::sync::Arc;

use base64::Engine as _;
use envhost::computer::{Computer, image, tools};
use envhost::protocol::computer::settings::Settings;
use envhost::protocol::{Content, ToolResult};
use envhost::runtime::driver::{Driver, Grants};
use envhost::runtime::{Limits, Runtime};
use envhost_tests::guest;
use serde_json::{Value, json};

async fn computer() -> Arc<Computer> {
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("desk")).unwrap();
    let driver = Arc::new(
        Driver::from_bytes(&runtime, bytes, Limits::default(), &Grants::default())
            .await
            .unwrap(),
    );
    let instance = driver.instantiate("desk").await.unwrap();
    Computer::new(driver, instance, Settings::default())
}

async fn call(computer: &Computer, tool: &str, arguments: Value) -> ToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    tools::call(computer, tool, arguments, "default").await
}

fn structured(result: &ToolResult) -> Value {
    result.structured().unwrap_or(Value::Null)
}

/// The RGB pixels of a result's PNG image block.
fn pixels(result: &ToolResult) -> (u32, u32, Vec<u8>) {
    let data = result
        .content
        .iter()
        .find_map(|c| match c {
            Content::Image { data, mime_type } if mime_type == "image/png" => Some(data),
            _ => None,
        })
        .expect("a PNG image block");
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    image::rgb(&png).unwrap()
}

fn pixel((w, _, rgb): &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let at = ((y * w + x) * 3) as usize;
    [rgb[at], rgb[at + 1], rgb[at + 2]]
}

fn code(result: &ToolResult) -> (String, String) {
    assert!(result.is_error, "{:?}", result.structured());
    let s = structured(result);
    (
        s["code"].as_str().unwrap().into(),
        s["applied"].as_str().unwrap().into(),
    )
}

#[tokio::test]
async fn a_screenshot_is_a_native_frame_and_a_region_a_pixel_exact_crop() {
    let computer = computer().await;
    let shot = call(&computer, "computer_screenshot", json!({"space": "frame"})).await;
    let s = structured(&shot);
    assert_eq!(s["frame_id"], "f1");
    assert_eq!(
        (s["width"].as_u64(), s["height"].as_u64()),
        (Some(1280), Some(800))
    );
    assert_eq!(
        s["display"],
        json!({"width": 1280, "height": 800, "scale": 1.0})
    );
    assert_eq!(
        s["summary"],
        "Captured f1: 1280×800 of the 1280×800 display"
    );
    assert!(s.get("parent_frame_id").is_none());
    let whole = pixels(&shot);
    assert_eq!((whole.0, whole.1), (1280, 800));

    let region = json!({"region": [320, 200, 747, 467], "frame_id": "f1", "space": "frame"});
    let crop = call(&computer, "computer_screenshot", region).await;
    let c = structured(&crop);
    assert_eq!(c["parent_frame_id"], "f1");
    assert_eq!(c["summary"], "Cropped f2: 427×267 of f1 at (320, 200)");
    let part = pixels(&crop);
    for (x, y) in [(0, 0), (426, 266), (213, 133)] {
        assert_eq!(pixel(&part, x, y), pixel(&whole, x + 320, y + 200));
    }
    let jpeg = call(
        &computer,
        "computer_screenshot",
        json!({"format": "jpeg", "quality": 60}),
    )
    .await;
    assert!(
        matches!(&jpeg.content[1], Content::Image { mime_type, .. } if mime_type == "image/jpeg")
    );
}

#[tokio::test]
async fn a_click_in_norm_space_lands_and_the_next_frame_shows_it() {
    let computer = computer().await;
    let before = pixels(&call(&computer, "computer_screenshot", json!({})).await);
    // The Save button spans x 40..240, y 60..100 of 1280×800: its middle in norm 1000.
    let (nx, ny) = (140.0 * 1000.0 / 1280.0, 80.0 * 1000.0 / 800.0);
    let click = call(
        &computer,
        "computer_click",
        json!({"x": nx, "y": ny, "space": "norm", "norm_scale": 1000, "screenshot": true}),
    )
    .await;
    let s = structured(&click);
    assert_eq!(s["applied"], "yes");
    assert_eq!(s["others_since_frame"], 0);
    assert_eq!(
        s["summary"],
        "Clicked left at (109.375, 100) (norm 1000) in f1, then captured f2"
    );
    assert_eq!(s["frame"]["frame_id"], "f2");
    let after = pixels(&click);
    let changed = (52..240).any(|x| (72..88).any(|y| pixel(&before, x, y) != pixel(&after, x, y)));
    assert!(changed, "the Save button's count did not change");
}

#[tokio::test]
async fn refusals_carry_the_contracts_codes_and_change_nothing() {
    let computer = computer().await;
    let first = call(&computer, "computer_screenshot", json!({})).await;
    let cases = [
        (
            "computer_click",
            json!({"x": 1280, "y": 0, "frame_id": "f1"}),
            "out_of_bounds",
        ),
        (
            "computer_click",
            json!({"x": 1, "y": 1, "frame_id": "f999999999"}),
            "stale_frame",
        ),
        (
            "computer_key",
            json!({"keys": ["ctrl", "s"]}),
            "invalid_argument",
        ),
        (
            "computer_type",
            json!({"text": "a\u{1b}b"}),
            "invalid_argument",
        ),
        (
            "computer_click",
            json!({"x": 1, "y": 1, "frame_id": "f1", "count": 4}),
            "invalid_argument",
        ),
        (
            "computer_click",
            json!({"x": 1, "y": 1, "button": "right"}),
            "unsupported",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let refused = call(&computer, tool, arguments.clone()).await;
        assert_eq!(
            code(&refused),
            (expected.to_owned(), "no".to_owned()),
            "{tool} {arguments}"
        );
    }
    let typed = call(&computer, "computer_type", json!({"text": "a\u{1b}b\u{7}"})).await;
    assert_eq!(
        structured(&typed)["message"],
        "text has control characters ['U+0007', 'U+001B']; press keys with computer_key"
    );
    let again = call(&computer, "computer_screenshot", json!({})).await;
    assert_eq!(pixels(&first), pixels(&again));
}

#[tokio::test]
async fn sixteen_clicks_at_once_all_land() {
    let computer = computer().await;
    call(&computer, "computer_screenshot", json!({})).await;
    let clicks = (0..16).map(|_| {
        let computer = computer.clone();
        async move { call(&computer, "computer_click", json!({"x": 140, "y": 80})).await }
    });
    for result in futures::future::join_all(clicks).await {
        assert!(!result.is_error, "{:?}", result.structured());
    }
    let position = call(&computer, "computer_pointer_position", json!({})).await;
    let p = structured(&position);
    assert_eq!(p["screen"], json!({"x": 140, "y": 80}));
    assert_eq!(p["inside_frame"], true);
}

#[tokio::test]
async fn held_keys_are_released_by_keyboard_up_and_the_pointer_list_is_fixed() {
    let computer = computer().await;
    let down = call(
        &computer,
        "computer_keyboard_down",
        json!({"keys": ["shift"]}),
    )
    .await;
    assert_eq!(structured(&down)["summary"], "Pressed and held Shift");
    let up = call(&computer, "computer_keyboard_up", json!({})).await;
    assert_eq!(structured(&up)["summary"], "Released Shift");
    let none = call(&computer, "computer_keyboard_up", json!({})).await;
    assert_eq!(structured(&none)["message"], "you are holding no keys");
    let list = call(&computer, "computer_pointer_list", json!({})).await;
    assert_eq!(
        structured(&list)["summary"],
        "1 pointer: default (foreground)"
    );
    let unknown = call(&computer, "computer_nothing", json!({})).await;
    assert!(unknown.is_error && unknown.structured().is_none());
}

#[tokio::test]
async fn a_desk_forked_after_input_is_pixel_identical_and_then_independent() {
    let desk = computer().await;
    call(&desk, "computer_screenshot", json!({})).await;
    for (tool, arguments) in [
        ("computer_click", json!({"x": 140, "y": 80, "count": 2})),
        ("computer_click", json!({"x": 292, "y": 80})),
        ("computer_click", json!({"x": 300, "y": 148})),
        ("computer_type", json!({"text": "forked desk"})),
        (
            "computer_scroll",
            json!({"x": 200, "y": 400, "direction": "down", "amount": 7}),
        ),
        ("computer_click", json!({"x": 200, "y": 230})),
    ] {
        let result = call(&desk, tool, arguments).await;
        assert!(!result.is_error, "{tool}: {:?}", result.structured());
    }
    desk.seed(r#"{"saved": 41, "name": "forked desk", "selected": 9}"#)
        .await
        .unwrap();
    let original = pixels(&call(&desk, "computer_screenshot", json!({})).await);
    let blank = pixels(&call(&*computer().await, "computer_screenshot", json!({})).await);
    assert!(original != blank, "the input changed nothing to compare");

    let fork = desk.fork("desk-fork").await.unwrap();
    let forked = pixels(&call(&fork, "computer_screenshot", json!({})).await);
    assert!(
        original == forked,
        "the fork's first frame differs from its original's"
    );

    for (tool, arguments) in [
        ("computer_click", json!({"x": 300, "y": 148})),
        ("computer_type", json!({"text": " only"})),
    ] {
        let result = call(&fork, tool, arguments).await;
        assert!(!result.is_error, "{tool}: {:?}", result.structured());
    }
    let fork_after = pixels(&call(&fork, "computer_screenshot", json!({})).await);
    let original_after = pixels(&call(&desk, "computer_screenshot", json!({})).await);
    assert!(fork_after != forked, "typing into the fork changed nothing");
    assert!(
        original_after == original,
        "typing into the fork changed its original"
    );
}
