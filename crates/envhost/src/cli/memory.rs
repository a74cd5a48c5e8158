//! What the `envhost` executable keeps resident: mimalloc (its global allocator) tuned to hand
//! freed memory back soon, and the executable's pages that only starting up used handed back
//! once it is serving.

use std::time::Duration;

#[cfg(feature = "mimalloc")]
use libmimalloc_sys as mi;

/// mimalloc's `arena_eager_commit` and `purge_delay` options (mimalloc 3's `mi_option_t`).
#[cfg(feature = "mimalloc")]
const ARENA_EAGER_COMMIT: mi::mi_option_t = 4;
#[cfg(feature = "mimalloc")]
const PURGE_DELAY: mi::mi_option_t = 15;

/// How long memory freed to mimalloc stays committed before it is handed back, in
/// milliseconds. Peak RSS over the shared bench (8 runs each): 24–28 MiB at 20 ms; mimalloc's
/// default of 1 s reached 31 MiB, 100 ms 30 MiB once in 8, over the 30 MiB target; 1 ms cost the
/// CPU mimalloc saves.
#[cfg(feature = "mimalloc")]
const PURGE_DELAY_MS: std::ffi::c_long = 20;

/// How often free allocator memory is handed back to the system while serving (memory freed in
/// a burst is otherwise handed back only when the allocator is next used).
pub const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// Sets mimalloc's options, first thing in `main`: arenas committed page by page as they are
/// used rather than whole, and [`PURGE_DELAY_MS`]. They replace what `MIMALLOC_*` environment
/// variables set. Nothing without the `mimalloc` feature.
pub fn configure_allocator() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: mi_option_set only records an option's value; it has no preconditions.
    unsafe {
        mi::mi_option_set(ARENA_EAGER_COMMIT, 0);
        mi::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS);
    }
}

/// Hands the allocator's free memory back to the system: compiling a component leaves tens of
/// MiB of freed working memory, and bursts of concurrent requests a few more. Nothing without
/// the `mimalloc` feature.
pub fn release_free_heap() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: mi_collect only frees memory the allocator no longer uses; it has no
    // preconditions.
    unsafe {
        mi::mi_collect(true)
    }
}

/// Asks the kernel to reclaim the resident pages of the executable's read-only mappings (code,
/// read-only data, unwind tables), once the environments are loaded.
///
/// Starting touches about 6 MiB of code that serving never runs again (argument and config
/// parsing, the compiled-artefact cache, compiling, schema building); those pages stayed
/// resident, counted in the RSS, until memory pressure reclaimed them. After this
/// `madvise(MADV_PAGEOUT)` (Linux 5.4+), serving faults back in the code it runs (about 10 MiB
/// for slack) and nothing else. Only clean file pages are reclaimed: nothing is written and
/// nothing is lost. Where the kernel refuses, nothing changes (logged at debug).
pub fn release_startup_code() {
    #[cfg(target_os = "linux")]
    {
        let (Ok(maps), Ok(exe)) = (
            std::fs::read_to_string("/proc/self/maps"),
            std::env::current_exe(),
        ) else {
            return;
        };
        let exe = exe.to_string_lossy();
        for (start, end) in read_only_mappings(&maps, &exe) {
            // SAFETY: [start, end) is a whole read-only, file-backed mapping of this process;
            // MADV_PAGEOUT only drops its clean pages, which fault back in unchanged when used.
            let status = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT)
            };
            if status != 0 {
                tracing::debug!(
                    error = %std::io::Error::last_os_error(),
                    "cannot hand back the executable's startup pages"
                );
                return;
            }
        }
    }
}

/// The `(start, end)` addresses of the mappings in `maps` (the text of `/proc/self/maps`) of the
/// file `path` that are not writable.
fn read_only_mappings<'a>(
    maps: &'a str,
    path: &'a str,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    maps.lines().filter_map(move |line| {
        let mut fields = line.split_whitespace();
        let range = fields.next()?;
        let perms = fields.next()?;
        let file = fields.nth(3)?;
        if file != path || perms.contains('w') {
            return None;
        }
        let (start, end) = range.split_once('-')?;
        Some((
            usize::from_str_radix(start, 16).ok()?,
            usize::from_str_radix(end, 16).ok()?,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "mimalloc")]
    #[test]
    fn the_option_numbers_are_those_of_mimalloc_3() {
        // SAFETY: mi_version has no preconditions.
        assert_eq!(unsafe { mi::mi_version() } / 10_000, 3);
    }

    #[test]
    fn only_the_files_read_only_mappings_are_chosen() {
        let maps = "\
55d0a000-55d0b000 r--p 00000000 fe:00 1 /opt/envhost
55d0b000-55d0f000 r-xp 00001000 fe:00 1 /opt/envhost
55d0f000-55d10000 rw-p 00005000 fe:00 1 /opt/envhost
55d10000-55d11000 r-xp 00000000 fe:00 2 /opt/envhost-other
7f000000-7f001000 rw-p 00000000 00:00 0
7f001000-7f002000 r-xp 00000000 fe:00 3 /usr/lib/libc.so.6
";
        let chosen: Vec<_> = read_only_mappings(maps, "/opt/envhost").collect();
        assert_eq!(chosen, [(0x55d0a000, 0x55d0b000), (0x55d0b000, 0x55d0f000)]);
    }
}
