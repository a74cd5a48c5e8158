//! The glue `#[computer_driver]` expands to: the driver's value, held for the instance's life,
//! and the world's exports, each forwarding to the traits of [`super::driver`].

/// Exports `$ty`, a [`Driver`](crate::computer::Driver), through `$bindings`, the module of the
/// bindings `#[computer_driver]` generated for the world it picked; each `$group` (`pointer`,
/// `keyboard`, `display_modes`) is an exported group `$ty` implements the trait of.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_computer_driver {
    ($ty:ty, $bindings:ident $(, $group:ident)*) => {
        const _: () = {
            use $crate::computer as __c;
            use $bindings::exports::agentenv::computer as __exports;

            ::std::thread_local! {
                static DRIVER: ::std::cell::RefCell<$ty> =
                    ::std::cell::RefCell::new(<$ty as ::std::default::Default>::default());
            }

            fn with<R>(f: impl FnOnce(&mut $ty) -> R) -> R {
                DRIVER.with_borrow_mut(f)
            }

            struct Export;

            impl __exports::operations::Guest for Export {
                fn name() -> ::std::string::String {
                    <$ty as __c::Driver>::NAME.into()
                }
                fn features() -> __c::FeatureSet {
                    with(<$ty as __c::Driver>::features)
                }
                fn display() -> ::std::result::Result<__c::DisplayState, __c::DriverError> {
                    with(<$ty as __c::Driver>::display)
                }
                fn capture() -> ::std::result::Result<
                    __exports::operations::CaptureImage,
                    __c::DriverError,
                > {
                    use __exports::operations::CaptureImage;
                    with(<$ty as __c::Driver>::capture).map(|capture| match capture {
                        __c::Capture::Drawn(image) => CaptureImage::Drawn(image),
                        __c::Capture::Indexed(image) => CaptureImage::Indexed(image),
                        __c::Capture::Held(captured) => CaptureImage::Held(captured),
                    })
                }
                fn ready_checks() -> ::std::vec::Vec<__c::ReadyCheck> {
                    with(<$ty as __c::Driver>::ready_checks)
                }
                fn export_state() -> ::std::option::Option<::std::string::String> {
                    with(<$ty as __c::Driver>::export_state)
                }
                fn seed(json: ::std::string::String) -> ::std::result::Result<(), __c::DriverError> {
                    with(|d| __c::Driver::seed(d, json))
                }
                fn click(
                    at: __c::Point,
                    button: __c::Button,
                    count: u32,
                    modifiers: ::std::vec::Vec<__c::Key>,
                ) -> ::std::result::Result<(), __c::DriverError> {
                    with(|d| __c::Driver::click(d, at, button, count, modifiers))
                }
                fn drag(
                    path: ::std::vec::Vec<__c::Point>,
                    button: __c::Button,
                    duration_ms: u32,
                    modifiers: ::std::vec::Vec<__c::Key>,
                ) -> ::std::result::Result<(), __c::DriverError> {
                    with(|d| __c::Driver::drag(d, path, button, duration_ms, modifiers))
                }
                fn scroll(
                    at: __c::Point,
                    direction: __c::ScrollDirection,
                    amount: u32,
                    modifiers: ::std::vec::Vec<__c::Key>,
                ) -> ::std::result::Result<(), __c::DriverError> {
                    with(|d| __c::Driver::scroll(d, at, direction, amount, modifiers))
                }
                fn type_text(
                    text: ::std::string::String,
                    tap_hold_ms: u32,
                    type_delay_ms: u32,
                ) -> ::std::result::Result<(), __c::DriverError> {
                    with(|d| __c::Driver::type_text(d, text, tap_hold_ms, type_delay_ms))
                }
                fn press(
                    keys: ::std::vec::Vec<__c::Key>,
                    tap_hold_ms: u32,
                ) -> ::std::result::Result<(), __c::DriverError> {
                    with(|d| __c::Driver::press(d, keys, tap_hold_ms))
                }
            }

            $($crate::__export_computer_group!($group, $ty);)*

            $bindings::export!(Export with_types_in $bindings);
        };
    };
}

/// One group's export for [`__export_computer_driver!`], inside its expansion (it names that
/// expansion's `Export`, `with`, `__c` and `__exports`).
#[doc(hidden)]
#[macro_export]
macro_rules! __export_computer_group {
    (pointer, $ty:ty) => {
        impl __exports::pointer::Guest for Export {
            fn move_to(at: __c::Point) -> ::std::result::Result<(), __c::DriverError> {
                with(|d| __c::Pointer::pointer_move(d, at))
            }
            fn button_down(button: __c::Button) -> ::std::result::Result<(), __c::DriverError> {
                with(|d| __c::Pointer::pointer_down(d, button))
            }
            fn button_up(button: __c::Button) -> ::std::result::Result<(), __c::DriverError> {
                with(|d| __c::Pointer::pointer_up(d, button))
            }
            fn position() -> ::std::result::Result<__c::Point, __c::DriverError> {
                with(<$ty as __c::Pointer>::pointer_position)
            }
        }
    };
    (keyboard, $ty:ty) => {
        impl __exports::keyboard::Guest for Export {
            fn key_down(
                keys: ::std::vec::Vec<__c::Key>,
            ) -> ::std::result::Result<(), __c::DriverError> {
                with(|d| __c::Keyboard::key_down(d, keys))
            }
            fn key_up(
                keys: ::std::vec::Vec<__c::Key>,
            ) -> ::std::result::Result<(), __c::DriverError> {
                with(|d| __c::Keyboard::key_up(d, keys))
            }
        }
    };
    (display_modes, $ty:ty) => {
        impl __exports::display_modes::Guest for Export {
            fn modes() -> ::std::vec::Vec<(u32, u32)> {
                with(<$ty as __c::DisplayModes>::display_modes)
            }
            fn set_display(
                width: u32,
                height: u32,
                scale: f64,
            ) -> ::std::result::Result<__c::DisplayState, __c::DriverError> {
                with(|d| __c::DisplayModes::set_display(d, width, height, scale))
            }
        }
    };
}
