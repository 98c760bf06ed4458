//! The Prometheus client libraries' standard `process_*` metrics, read from /proc at each
//! scrape (Linux, where operators run; elsewhere they are left out).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat on every architecture
/// Kubernetes runs on.
const TICKS_PER_SECOND: f64 = 100.0;

#[derive(Debug, Default)]
pub(crate) struct ProcessCollector;

/// What /proc says of this process.
#[derive(Debug, Default, PartialEq)]
struct Process {
    cpu_seconds: f64,
    resident_bytes: f64,
    virtual_bytes: f64,
    open_fds: f64,
    max_fds: f64,
    start_time_seconds: f64,
}

impl Process {
    fn read() -> Option<Process> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
        let boot = std::fs::read_to_string("/proc/stat").ok()?;
        let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count();
        parse(&stat, &status, &limits, &boot, open_fds)
    }
}

fn parse(stat: &str, status: &str, limits: &str, boot: &str, open_fds: usize) -> Option<Process> {
    // The fields after the command, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime, stime and starttime are fields 14, 15 and 22 of the line; 3 is fields[0].
    let ticks = |field: usize| fields.get(field - 3)?.parse::<f64>().ok();
    let kib = |key: &str| {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<f64>()
            .ok()
    };
    let max_fds = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))?
        .split_whitespace()
        .nth(3)?
        .parse::<f64>()
        .ok()?;
    let boot_time = boot
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse::<f64>()
        .ok()?;
    Some(Process {
        cpu_seconds: (ticks(14)? + ticks(15)?) / TICKS_PER_SECOND,
        resident_bytes: kib("VmRSS:")? * 1024.0,
        virtual_bytes: kib("VmSize:")? * 1024.0,
        open_fds: open_fds as f64,
        max_fds,
        start_time_seconds: boot_time + ticks(22)? / TICKS_PER_SECOND,
    })
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(process) = Process::read() else {
            return Ok(());
        };
        let counter = ConstCounter::new(process.cpu_seconds);
        counter.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            None,
            MetricType::Counter,
        )?)?;
        for (name, help, value) in [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                process.resident_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                process.virtual_bytes,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                process.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                process.max_fds,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                process.start_time_seconds,
            ),
        ] {
            ConstGauge::new(value).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_read_as_the_prometheus_clients_do() {
        let stat = "4242 (my op (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 12345 1000000 2000";
        let status = "Name:\tmy op\nVmSize:\t  204800 kB\nVmRSS:\t   10240 kB\n";
        let limits = "Limit                     Soft Limit           Hard Limit           Units\nMax open files            1048576              1048576              files\n";
        let boot = "cpu  1 2 3\nbtime 1764000000\n";
        let process = parse(stat, status, limits, boot, 12).unwrap();
        let started = process.start_time_seconds;
        assert!((started - 1_764_000_123.45).abs() < 1e-3, "{started}");
        assert_eq!(
            process,
            Process {
                cpu_seconds: 3.0,
                resident_bytes: 10_485_760.0,
                virtual_bytes: 209_715_200.0,
                open_fds: 12.0,
                max_fds: 1_048_576.0,
                start_time_seconds: started,
            }
        );
    }

    #[test]
    fn this_process_is_measured() {
        let process = Process::read().expect("a Linux /proc");
        assert!(process.resident_bytes > 0.0 && process.open_fds > 0.0);
    }
}
