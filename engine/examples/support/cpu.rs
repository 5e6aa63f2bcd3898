//! What the measurement examples share: this process's CPU time.

/// CPU seconds (user + system) this process has used, from /proc (Linux); 0 elsewhere. Wall time
/// on a shared machine says as much about the neighbours as about the code; CPU time does not.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces): state is the
    // first, utime the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
