//! Readings of CPU time and memory: this process' from getrusage, the server's and the
//! machine's from /proc.

/// A process' memory, in KiB, from /proc.
#[derive(Clone, Copy, Debug)]
pub struct Memory {
    /// Resident set size.
    pub rss: u64,
    /// Peak resident set size.
    pub hwm: u64,
}

/// CPU seconds used so far by this process and the server.
#[derive(Clone, Copy, Debug)]
pub struct CpuTimes {
    /// This process' user+system seconds.
    pub client: f64,
    /// The server's, when its pid is known and readable.
    pub server: Option<f64>,
    /// The whole machine's, when /proc/stat is readable.
    pub machine: Option<MachineTimes>,
}

impl CpuTimes {
    /// The CPU times now, of this process and of `server_pid`.
    pub fn now(server_pid: Option<u32>) -> Self {
        Self {
            client: self_cpu_seconds(),
            server: server_pid.and_then(proc_cpu_seconds),
            machine: MachineTimes::now(),
        }
    }
}

/// The machine's CPU time, all CPUs together, in clock ticks, from the first line of
/// `/proc/stat`: so far, or over a window ([`MachineTimes::since`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MachineTimes {
    /// Every tick, in any state (user, nice, system, idle, iowait, irq, softirq, steal).
    pub total: u64,
    /// Ticks idle or waiting for I/O.
    pub idle: u64,
    /// Ticks stolen: a vCPU wanted to run while the hypervisor ran something else.
    pub steal: u64,
}

impl MachineTimes {
    /// The machine's times so far; `None` where /proc/stat cannot be read or parsed.
    pub fn now() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The times of `/proc/stat`'s text: its `cpu` line's first eight fields (guest time is
    /// counted in user and nice already).
    fn parse(stat: &str) -> Option<Self> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let [user, nice, system, idle, iowait, irq, softirq, steal] = fields[..] else {
            return None;
        };
        Some(Self {
            total: user + nice + system + idle + iowait + irq + softirq + steal,
            idle: idle + iowait,
            steal,
        })
    }

    /// The ticks from `earlier` to `self`.
    pub fn since(self, earlier: Self) -> Self {
        Self {
            total: self.total.saturating_sub(earlier.total),
            idle: self.idle.saturating_sub(earlier.idle),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }

    /// The stolen share of the ticks, 0 to 1; `None` for no ticks.
    pub fn steal_share(&self) -> Option<f64> {
        (self.total > 0).then(|| self.steal as f64 / self.total as f64)
    }

    /// The idle share of the ticks, 0 to 1; `None` for no ticks.
    pub fn idle_share(&self) -> Option<f64> {
        (self.total > 0).then(|| self.idle as f64 / self.total as f64)
    }
}

/// Both windows' ticks together.
impl std::ops::Add for MachineTimes {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            total: self.total + other.total,
            idle: self.idle + other.idle,
            steal: self.steal + other.steal,
        }
    }
}

/// Every window's ticks together.
impl std::iter::Sum for MachineTimes {
    fn sum<I: Iterator<Item = Self>>(windows: I) -> Self {
        windows.fold(Self::default(), std::ops::Add::add)
    }
}

/// This process' user+system CPU seconds so far.
fn self_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the rusage it is given, which is zeroed plain data.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Process `pid`'s user+system CPU seconds so far, from `/proc/<pid>/stat`.
fn proc_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then(|| (utime + stime) as f64 / ticks as f64)
}

/// Process `pid`'s CPU time so far (every thread's, those that ended included), in
/// nanoseconds, from its CPU-time clock (`clock_getcpuclockid`): nanosecond readings where
/// `/proc/<pid>/stat` counts clock ticks.
pub fn proc_cpu_ns(pid: u32) -> Option<u64> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: both calls only write the plain values they are given.
    let time = unsafe {
        if libc::clock_getcpuclockid(pid, &mut clock) != 0 {
            return None;
        }
        let mut time: libc::timespec = std::mem::zeroed();
        if libc::clock_gettime(clock, &mut time) != 0 {
            return None;
        }
        time
    };
    let seconds = u64::try_from(time.tv_sec).ok()?;
    let nanos = u64::try_from(time.tv_nsec).ok()?;
    Some(seconds * 1_000_000_000 + nanos)
}

/// Waits (at most `limit`) until no thread of process `pid` is running, so that its CPU clock
/// holds every slice it has run: a clock read while one of its threads runs may lag that
/// thread's current slice by up to a scheduler tick when the process has CPU timers armed (the
/// Python reference's readings came in multiples of 4 ms without this).
pub fn wait_quiescent(pid: u32, limit: std::time::Duration) {
    let started = std::time::Instant::now();
    while started.elapsed() < limit && any_running(pid) {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Whether a thread of process `pid` is running (state `R` in `/proc/<pid>/task/*/stat`).
fn any_running(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let state = stat
                    .rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .next()?
                    .to_owned();
                Some(state == "R")
            })
            .unwrap_or(false)
    })
}

/// This thread's CPU time so far, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    // SAFETY: clock_gettime only writes the timespec it is given.
    let time = unsafe {
        let mut time: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time);
        time
    };
    u64::try_from(time.tv_sec).unwrap_or(0) * 1_000_000_000
        + u64::try_from(time.tv_nsec).unwrap_or(0)
}

/// Process `pid`'s VmRSS and VmHWM, from `/proc/<pid>/status`.
pub fn proc_memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| {
        status.lines().find_map(|line| {
            let value = line.strip_prefix(key)?.strip_prefix(':')?;
            value.trim().trim_end_matches("kB").trim().parse().ok()
        })
    };
    Some(Memory {
        rss: kib("VmRSS")?,
        hwm: kib("VmHWM")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_times_come_from_the_cpu_line() {
        let stat = "cpu  100 5 50 800 20 3 2 20 7 0\ncpu0 50 2 25 400 10 1 1 10 0 0\n";
        let times = MachineTimes::parse(stat).unwrap();
        assert_eq!(
            times,
            MachineTimes {
                total: 1000,
                idle: 820,
                steal: 20
            }
        );
        let later = MachineTimes {
            total: 1400,
            idle: 900,
            steal: 120,
        };
        let window = later.since(times);
        assert_eq!(window.steal_share(), Some(0.25));
        assert_eq!(window.idle_share(), Some(0.2));
        assert_eq!(
            [window, window].into_iter().sum::<MachineTimes>().total,
            800
        );
        assert_eq!(MachineTimes::parse("cpu  1 2 3\n"), None);
        assert_eq!(MachineTimes::default().steal_share(), None);
    }

    #[test]
    fn cpu_clocks_advance_with_work() {
        let pid = std::process::id();
        let (process, thread) = (proc_cpu_ns(pid).unwrap(), thread_cpu_ns());
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(proc_cpu_ns(pid).unwrap() > process);
        assert!(thread_cpu_ns() > thread);
        assert_eq!(proc_cpu_ns(u32::MAX), None);
    }
}
