//! Readings of CPU time and memory: this process' from getrusage, the server's from /proc.

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
}

impl CpuTimes {
    /// The CPU times now, of this process and of `server_pid`.
    pub fn now(server_pid: Option<u32>) -> Self {
        Self {
            client: self_cpu_seconds(),
            server: server_pid.and_then(proc_cpu_seconds),
        }
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
