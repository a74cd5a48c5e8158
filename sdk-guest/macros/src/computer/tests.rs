//! The checks `#[computer_driver]` makes, on the model: what compiles, the world it picks, and
//! the message of each compile error.

use syn::{ItemImpl, parse_quote};

use super::model::{DriverArgs, DriverModel};

/// The seven required operations, and `extra` methods.
fn driver(extra: ItemImpl) -> ItemImpl {
    let mut item: ItemImpl = parse_quote! {
        impl Screen {
            #[display] fn display(&self) -> DisplayState { todo!() }
            #[capture] fn capture(&mut self) -> Result<Capture, DriverError> { todo!() }
            #[click] fn click(&mut self, at: Point, button: Button, count: u32, modifiers: Vec<Key>) {}
            #[drag] fn drag(&mut self, path: Vec<Point>, button: Button, duration_ms: u32, modifiers: Vec<Key>) {}
            #[scroll] fn scroll(&mut self, at: Point, direction: ScrollDirection, amount: u32, modifiers: Vec<Key>) {}
            #[type_text] fn type_text(&mut self, text: String, tap_hold_ms: u32, type_delay_ms: u32) {}
            #[press] fn press(&mut self, keys: Vec<Key>, tap_hold_ms: u32) {}
        }
    };
    item.items.extend(extra.items);
    item
}

fn model(item: ItemImpl) -> syn::Result<DriverModel> {
    DriverModel::from_impl(DriverArgs::default(), item)
}

fn error(item: ItemImpl) -> String {
    match model(item) {
        Ok(_) => panic!("expected a compile error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_required_operations_make_the_plain_driver() {
    let m = model(driver(parse_quote!(impl Screen {}))).unwrap();
    assert_eq!(m.world(), "driver");
    assert_eq!(m.name, "Screen");
    assert!(m.groups().is_empty());
}

#[test]
fn the_markers_are_taken_off_the_block() {
    let m = model(driver(parse_quote!(impl Screen {}))).unwrap();
    let remaining = m.item.items.iter().filter_map(|i| match i {
        syn::ImplItem::Fn(f) => Some(f.attrs.len()),
        _ => None,
    });
    assert!(remaining.into_iter().all(|n| n == 0));
}

#[test]
fn each_combination_of_groups_picks_its_world() {
    let pointer: ItemImpl = parse_quote! {
        impl Screen {
            #[pointer_move] fn to(&mut self, at: Point) {}
            #[pointer_down] fn down(&mut self, button: Button) {}
            #[pointer_up] fn up(&mut self, button: Button) {}
            #[pointer_position] fn at(&self) -> Point { todo!() }
        }
    };
    let keyboard: ItemImpl = parse_quote! {
        impl Screen {
            #[key_down] fn kd(&mut self, keys: Vec<Key>) {}
            #[key_up] fn ku(&mut self, keys: Vec<Key>) {}
        }
    };
    let display: ItemImpl = parse_quote! {
        impl Screen {
            #[display_modes] fn modes(&self) -> Vec<(u32, u32)> { vec![] }
            #[set_display] fn set(&mut self, width: u32, height: u32, scale: f64) -> DisplayState { todo!() }
        }
    };
    let cases = [
        (vec![&pointer], "driver-pointer"),
        (vec![&keyboard], "driver-keyboard"),
        (vec![&display], "driver-display-modes"),
        (vec![&pointer, &keyboard], "driver-pointer-keyboard"),
        (vec![&pointer, &display], "driver-pointer-display-modes"),
        (vec![&keyboard, &display], "driver-keyboard-display-modes"),
        (vec![&pointer, &keyboard, &display], "full-driver"),
    ];
    for (groups, world) in cases {
        let mut extra: ItemImpl = parse_quote!(impl Screen {});
        for g in groups {
            extra.items.extend(g.items.clone());
        }
        assert_eq!(model(driver(extra)).unwrap().world(), world);
    }
}

#[test]
fn the_picked_worlds_are_in_the_computer_package() {
    let wit = include_str!("../../../../wit/computer/computer.wit");
    for world in [
        "driver",
        "driver-pointer",
        "driver-keyboard",
        "driver-display-modes",
        "driver-pointer-keyboard",
        "driver-pointer-display-modes",
        "driver-keyboard-display-modes",
        "full-driver",
    ] {
        assert!(wit.contains(&format!("\nworld {world} {{")), "{world}");
    }
}

#[test]
fn missing_required_operations_are_named() {
    let item: ItemImpl = parse_quote! {
        impl Screen {
            #[display] fn display(&self) -> DisplayState { todo!() }
            #[click] fn click(&mut self, at: Point, button: Button, count: u32, modifiers: Vec<Key>) {}
        }
    };
    assert_eq!(
        error(item),
        "`Screen`: missing required operation(s): #[capture], #[drag], #[scroll], #[type_text], #[press]"
    );
}

#[test]
fn half_a_group_is_named_with_what_it_lacks() {
    let extra: ItemImpl = parse_quote! {
        impl Screen {
            #[pointer_move] fn to(&mut self, at: Point) {}
            #[pointer_down] fn down(&mut self, button: Button) {}
            #[key_up] fn ku(&mut self, keys: Vec<Key>) {}
            #[set_display] fn set(&mut self, width: u32, height: u32, scale: f64) -> DisplayState { todo!() }
        }
    };
    assert_eq!(
        error(driver(extra)),
        "`Screen`: the pointer group needs all of #[pointer_move], #[pointer_down], \
         #[pointer_up], #[pointer_position]; missing #[pointer_up], #[pointer_position]; \
         the keyboard group needs all of #[key_down], #[key_up]; missing #[key_down]; \
         the display-modes group needs all of #[display_modes], #[set_display]; \
         missing #[display_modes]"
    );
}

#[test]
fn every_problem_is_named_at_once() {
    let item: ItemImpl = parse_quote! {
        impl Screen {
            #[display] fn display(&self) -> DisplayState { todo!() }
            #[capture] fn capture(&mut self) -> Capture { todo!() }
            #[click] fn click(&mut self, at: Point, button: Button, count: u32, modifiers: Vec<Key>) {}
            #[drag] fn drag(&mut self, path: Vec<Point>, button: Button, duration_ms: u32, modifiers: Vec<Key>) {}
            #[scroll] fn scroll(&mut self, at: Point, direction: ScrollDirection, amount: u32, modifiers: Vec<Key>) {}
            #[type_text] fn type_text(&mut self, text: String, tap_hold_ms: u32, type_delay_ms: u32) {}
            #[key_down] fn kd(&mut self, keys: Vec<Key>) {}
        }
    };
    assert_eq!(
        error(item),
        "`Screen`: missing required operation(s): #[press]; the keyboard group needs all of \
         #[key_down], #[key_up]; missing #[key_up]"
    );
}

#[test]
fn an_operation_marked_twice_is_refused() {
    let extra: ItemImpl = parse_quote! {
        impl Screen {
            #[click] fn click_again(&mut self, at: Point, button: Button, count: u32, modifiers: Vec<Key>) {}
        }
    };
    assert_eq!(
        error(driver(extra)),
        "#[click] is marked on both `click` and `click_again`"
    );
}

#[test]
fn a_method_marked_with_two_operations_is_refused() {
    let extra: ItemImpl = parse_quote! {
        impl Screen {
            #[key_down] #[key_up] fn keys(&mut self, keys: Vec<Key>) {}
        }
    };
    assert_eq!(
        error(driver(extra)),
        "`keys` is marked both #[key_down] and #[key_up]; one method performs one operation"
    );
}

#[test]
fn the_parameters_are_checked_against_the_operation() {
    let item: ItemImpl = parse_quote! {
        impl Screen {
            #[click] fn click(&mut self, at: Point, button: Button) {}
        }
    };
    assert_eq!(
        error(item),
        "#[click] takes (&mut self, at: Point, button: Button, count: u32, modifiers: Vec<Key>); \
         `click` has 2 parameter(s) after `self`"
    );
    let item: ItemImpl = parse_quote! {
        impl Screen {
            #[display] fn display() -> DisplayState { todo!() }
        }
    };
    assert_eq!(
        error(item),
        "#[display] marks a method taking `&self` or `&mut self`: (&mut self)"
    );
}

#[test]
fn markers_take_no_arguments() {
    let item: ItemImpl = parse_quote! {
        impl Screen {
            #[display(os = "linux")] fn display(&self) -> DisplayState { todo!() }
        }
    };
    assert_eq!(error(item), "#[display] takes no arguments");
}

#[test]
fn a_generic_type_is_refused() {
    let item: ItemImpl = parse_quote!(
        impl<T> Screen<T> {}
    );
    assert_eq!(
        error(item),
        "#[computer_driver] goes on an inherent `impl` block of a type without generics"
    );
}

#[test]
fn the_attribute_names_the_driver() {
    let args = DriverArgs {
        name: Some(parse_quote!("desk")),
        supports: None,
    };
    let m = DriverModel::from_impl(args, driver(parse_quote!(impl Screen {}))).unwrap();
    assert_eq!(m.name, "desk");
}

#[test]
fn a_result_is_passed_on_and_a_value_wrapped() {
    let m = model(driver(parse_quote!(impl Screen {}))).unwrap();
    let returns = |op| m.methods[&op].returns_result;
    use super::ops::Op;
    assert!(returns(Op::Capture));
    assert!(!returns(Op::Display) && !returns(Op::Click));
}
