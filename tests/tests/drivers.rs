//! Computer drivers in the runtime: `guests/desk` loads with its groups and features, draws
//! its desktop, and takes input; components that are not drivers are refused at load.

use envhost::runtime::driver::bindings::agentenv::computer::types::{
    Button, Point, ScrollDirection,
};
use envhost::runtime::driver::{Driver, DriverCallError, DriverLoadError, Grants, Groups, Pixels};
use envhost::runtime::world::{CompileError, World};
use envhost::runtime::{Limits, Runtime};
use envhost_tests::guest;

async fn desk() -> Driver {
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("desk")).unwrap();
    Driver::from_bytes(&runtime, bytes, Limits::default(), &Grants::default())
        .await
        .unwrap()
}

/// The palette index of pixel (`x`, `y`) of an indexed capture.
fn index_at(pixels: &Pixels, x: u32, y: u32) -> u8 {
    match pixels {
        Pixels::Indexed { width, indices, .. } => indices[(y * width + x) as usize],
        Pixels::Rgb { .. } => panic!("the desk draws with a palette"),
    }
}

#[tokio::test]
async fn the_desk_loads_with_its_groups_and_features() {
    let driver = desk().await;
    assert_eq!(driver.name(), "desk");
    assert_eq!(
        driver.groups(),
        Groups {
            pointer: true,
            keyboard: true,
            display_modes: true
        }
    );
    assert_eq!(driver.features().buttons, [Button::Left]);
    let mut instance = driver.instantiate("desk-1").await.unwrap();
    let display = instance.display().await.unwrap();
    assert_eq!(
        (display.width, display.height, display.scale),
        (1280, 800, 1.0)
    );
    let pixels = instance.capture().await.unwrap();
    assert_eq!(pixels.size(), (1280, 800));
    assert!(instance.ready_checks().await.unwrap().is_empty());
}

#[tokio::test]
async fn input_changes_what_the_desk_draws_and_only_in_its_own_instance() {
    let driver = desk().await;
    let mut one = driver.instantiate("desk-1").await.unwrap();
    let mut other = driver.instantiate("desk-2").await.unwrap();
    let before = one.capture().await.unwrap();
    let stroke = [Point { x: 420, y: 220 }, Point { x: 600, y: 300 }];
    one.drag(&stroke, Button::Left, 100, &[]).await.unwrap();
    let after = one.capture().await.unwrap();
    assert_ne!(index_at(&before, 420, 220), index_at(&after, 420, 220));
    assert_eq!(other.capture().await.unwrap(), before);

    one.click(Point { x: 50, y: 140 }, Button::Left, 1, &[])
        .await
        .unwrap();
    other.keys(&["Shift".into()], true).await.unwrap();
    one.type_text("hi", 0, 0).await.unwrap();
    one.scroll(Point { x: 50, y: 210 }, ScrollDirection::Down, 3, &[])
        .await
        .unwrap();
    one.move_to(Point { x: 7, y: 9 }).await.unwrap();
    let at = one.position().await.unwrap();
    assert_eq!((at.x, at.y), (7, 9));
}

#[tokio::test]
async fn the_desk_refuses_buttons_it_does_not_have_with_a_code() {
    let driver = desk().await;
    let mut instance = driver.instantiate("desk-1").await.unwrap();
    let refused = instance
        .click(Point { x: 1, y: 1 }, Button::Right, 1, &[])
        .await
        .unwrap_err();
    match refused {
        DriverCallError::Driver(e) => assert_eq!(e.code_name(), "unsupported"),
        other => panic!("expected the driver's error, got {other}"),
    }
    assert_eq!(instance.modes().await.unwrap(), [(1280, 800), (1024, 768)]);
    instance.display().await.unwrap();
}

#[tokio::test]
async fn an_environment_is_not_a_driver() {
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("counter")).unwrap();
    let refused = Driver::from_bytes(&runtime, bytes, Limits::default(), &Grants::default()).await;
    match refused {
        Err(e @ DriverLoadError::Compile(CompileError::OtherWorld { found, wanted })) => {
            assert_eq!((found, wanted), (World::Environment, World::Driver));
            assert_eq!(
                e.to_string(),
                "an environment component, not a computer driver"
            );
        }
        Err(other) => panic!("expected a compile error, got {other}"),
        Ok(_) => panic!("an environment loaded as a driver"),
    }
}
