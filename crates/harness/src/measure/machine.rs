//! The machine a run happens on: CPU name, logical CPUs, memory and cache sizes, each with the
//! file it was read from, the SIMD features the CPU reports and how this binary was built, so
//! that a figure can be read against the hardware and the code that produced it.

use std::path::Path;

/// One CPU cache as the kernel describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    /// 1, 2, 3, ...
    pub level: u32,
    /// "Data", "Instruction" or "Unified".
    pub kind: String,
    /// Size in bytes.
    pub bytes: u64,
    /// The CPUs sharing it (kernel's list syntax).
    pub shared_cpus: String,
}

/// What was found out about the machine.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Where the CPU name came from.
    pub cpu_source: String,
    /// Logical CPUs available to this process.
    pub logical_cpus: usize,
    /// Total memory in GiB, if known.
    pub memory_gib: Option<f64>,
    /// Caches of cpu0, data and unified ones first by level.
    pub caches: Vec<Cache>,
    /// Where the cache sizes came from (or why they are missing).
    pub cache_source: String,
    /// Kernel release.
    pub kernel: String,
    /// The SIMD features the CPU reports (`sparse::colored::simd::cpu_features`).
    pub cpu_features: Vec<String>,
    /// How this binary was built.
    pub build: Build,
    /// Which code ran, when, and how busy the machine was when it started.
    pub provenance: Provenance,
}

/// Which code produced a run, when, and the load the run started under.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// `git rev-parse HEAD` of the working directory (or why it is unknown).
    pub commit: String,
    /// Whether `git status --porcelain` listed changes (None: git could not tell).
    pub dirty: Option<bool>,
    /// Start of the run, UTC, as `YYYY-MM-DD HH:MM:SS UTC`.
    pub date: String,
    /// `/proc/loadavg`'s 1, 5 and 15 minute load averages at the start (None: unreadable).
    pub load: Option<[f64; 3]>,
}

impl Provenance {
    /// Reads the commit, the date and the load now.
    pub fn now() -> Provenance {
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        let commit = git(&["rev-parse", "HEAD"])
            .unwrap_or_else(|| "unknown (not run inside a git checkout)".into());
        // Only tracked changes outside results/ say the code differs from the commit: untracked
        // files and the committed results, which a run rewrites as it goes (so a section
        // recorded after the first would otherwise always read dirty), do not.
        let dirty = git(&[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ":(top,exclude)results",
        ])
        .map(|s| !s.is_empty());
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Provenance {
            commit,
            dirty,
            date: utc_date(secs),
            load: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|t| parse_loadavg(&t)),
        }
    }

    /// `commit (clean)`, `commit (dirty: uncommitted changes)` or with `dirty state unknown`.
    pub fn commit_line(&self) -> String {
        let state = match self.dirty {
            Some(true) => "dirty: tracked files differ from the commit",
            Some(false) => "clean",
            None => "dirty state unknown",
        };
        format!("{} ({state})", self.commit)
    }

    /// `1.23 / 1.00 / 0.80 (1, 5, 15 min)` or `unknown`.
    pub fn load_line(&self) -> String {
        self.load
            .map_or("unknown (/proc/loadavg unreadable)".into(), |l| {
                format!(
                    "{:.2} / {:.2} / {:.2} (1, 5, 15 min averages, /proc/loadavg)",
                    l[0], l[1], l[2]
                )
            })
    }
}

/// The first three fields of `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let v: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .filter_map(|f| f.parse().ok())
        .collect();
    (v.len() == 3).then(|| [v[0], v[1], v[2]])
}

/// Seconds since 1970 as `YYYY-MM-DD HH:MM:SS UTC` (proleptic Gregorian calendar).
pub fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// How the running binary was built (recorded by the harness's build script).
#[derive(Debug, Clone, Default)]
pub struct Build {
    /// `rustc -V`.
    pub rustc: String,
    /// Cargo profile (`release`, `debug`).
    pub profile: String,
    /// Target triple.
    pub target: String,
    /// The rustflags cargo passed (empty: none).
    pub rustflags: String,
    /// Target features enabled at compile time.
    pub target_features: String,
    /// Whether the `enhanced-determinism` feature is on.
    pub enhanced_determinism: bool,
}

impl Build {
    /// This binary's build.
    pub fn this() -> Self {
        Build {
            rustc: env!("WOBBLE_RUSTC_VERSION").to_string(),
            profile: env!("WOBBLE_PROFILE").to_string(),
            target: env!("WOBBLE_TARGET").to_string(),
            rustflags: env!("WOBBLE_RUSTFLAGS").to_string(),
            target_features: env!("WOBBLE_TARGET_FEATURES").replace(',', " "),
            enhanced_determinism: sparse::colored::simd::DETERMINISTIC,
        }
    }
}

const CACHE_DIR: &str = "/sys/devices/system/cpu/cpu0/cache";

/// Parses a kernel size like "48K", "2048K", "1M" or "512" into bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Reads the caches of cpu0 from sysfs.
pub fn caches_from(dir: &Path) -> Vec<Cache> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with("index") {
            continue;
        }
        let p = e.path();
        let (Some(level), Some(kind), Some(size)) = (
            read(&p.join("level")).and_then(|l| l.parse::<u32>().ok()),
            read(&p.join("type")),
            read(&p.join("size")).and_then(|s| parse_size(&s)),
        ) else {
            continue;
        };
        out.push(Cache {
            level,
            kind,
            bytes: size,
            shared_cpus: read(&p.join("shared_cpu_list")).unwrap_or_default(),
        });
    }
    out.sort_by_key(|c| (c.level, c.kind == "Instruction"));
    out
}

/// Looks the machine up.
pub fn probe() -> Machine {
    let mut m = Machine {
        logical_cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        ..Default::default()
    };
    match std::fs::read_to_string("/proc/cpuinfo") {
        Ok(text) => {
            let name = text
                .lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string());
            match name {
                Some(n) => {
                    m.cpu = n;
                    m.cpu_source = "/proc/cpuinfo (model name)".into();
                }
                None => {
                    m.cpu = "unknown".into();
                    m.cpu_source = "/proc/cpuinfo has no model name line".into();
                }
            }
        }
        Err(e) => {
            m.cpu = "unknown".into();
            m.cpu_source = format!("/proc/cpuinfo unreadable: {e}");
        }
    }
    m.memory_gib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / (1024.0 * 1024.0))
    });
    m.kernel = read(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_else(|| "unknown".into());
    m.caches = caches_from(Path::new(CACHE_DIR));
    m.cpu_features = sparse::colored::simd::cpu_features()
        .into_iter()
        .map(String::from)
        .collect();
    m.build = Build::this();
    m.provenance = Provenance::now();
    m.cache_source = if m.caches.is_empty() {
        format!("not found: {CACHE_DIR}/index*/ is missing or unreadable")
    } else {
        format!("{CACHE_DIR}/index*/{{level,type,size}}")
    };
    m
}

impl Machine {
    /// Size in bytes of the data (or unified) cache of `level`.
    pub fn data_cache(&self, level: u32) -> Option<u64> {
        self.caches
            .iter()
            .find(|c| c.level == level && c.kind != "Instruction")
            .map(|c| c.bytes)
    }

    /// One line naming the caches, e.g. "L1d 48 KiB, L2 2048 KiB, L3 260 MiB".
    pub fn cache_line(&self) -> String {
        if self.caches.is_empty() {
            return format!("cache sizes unknown ({})", self.cache_source);
        }
        self.caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| {
                let tag = if c.kind == "Data" { "d" } else { "" };
                format!("L{}{tag} {}", c.level, human_bytes(c.bytes))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A Markdown description.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let p = &self.provenance;
        s.push_str(&format!("- git commit: {}\n", p.commit_line()));
        s.push_str(&format!("- started: {}\n", p.date));
        s.push_str(&format!("- load at the start: {}\n", p.load_line()));
        s.push_str(&format!(
            "- CPU: {} ({} logical CPUs available to the run); read from {}\n",
            self.cpu, self.logical_cpus, self.cpu_source
        ));
        if let Some(g) = self.memory_gib {
            s.push_str(&format!("- memory: {g:.1} GiB (/proc/meminfo)\n"));
        }
        s.push_str(&format!(
            "- caches (cpu0): {}; read from {}\n",
            self.cache_line(),
            self.cache_source
        ));
        s.push_str(&format!("- Linux kernel {}\n", self.kernel));
        s.push_str(&format!(
            "- SIMD features the CPU reports: {}\n",
            if self.cpu_features.is_empty() {
                "none".to_string()
            } else {
                self.cpu_features.join(" ")
            }
        ));
        let b = &self.build;
        s.push_str(&format!(
            "- build: {}, {} profile, target {}, rustflags: {}, enhanced-determinism {}\n",
            b.rustc,
            b.profile,
            b.target,
            if b.rustflags.is_empty() {
                "none"
            } else {
                &b.rustflags
            },
            if b.enhanced_determinism { "on" } else { "off" }
        ));
        s.push_str(&format!(
            "- target features enabled at compile time: {}\n",
            b.target_features
        ));
        s
    }

    /// The Markdown line naming the distance kernel that `choice` runs on this machine.
    pub fn kernel_line(choice: sparse::colored::simd::Kernel) -> String {
        match choice.resolve() {
            Ok(k) => format!("- distance kernel of `colored`: {k} (`--kernel {choice}`)\n"),
            Err(e) => format!("- distance kernel of `colored`: none ({e})\n"),
        }
    }
}

/// "48 KiB", "2 MiB", ...
pub fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
        format!("{} GiB", b >> 30)
    } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// A directory laid out like `/sys/devices/system/cpu/cpu0/cache` for tests: one `index{i}`
/// per (level, type, size, ways), each with 64-byte lines.
#[cfg(test)]
pub(crate) fn sysfs_caches(caches: &[(u32, &str, &str, u32)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (i, (level, kind, size, ways)) in caches.iter().enumerate() {
        let d = dir.path().join(format!("index{i}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("level"), level.to_string()).unwrap();
        std::fs::write(d.join("type"), kind).unwrap();
        std::fs::write(d.join("size"), size).unwrap();
        std::fs::write(d.join("ways_of_associativity"), ways.to_string()).unwrap();
        std::fs::write(d.join("coherency_line_size"), "64").unwrap();
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_kernel_suffixes() {
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn dates_and_load_parse() {
        assert_eq!(utc_date(0), "1970-01-01 00:00:00 UTC");
        // 2024-02-29 12:34:56 UTC, a leap day.
        assert_eq!(utc_date(1_709_210_096), "2024-02-29 12:34:56 UTC");
        assert_eq!(
            parse_loadavg("0.52 1.10 2.00 3/400 1234\n"),
            Some([0.52, 1.10, 2.00])
        );
        assert_eq!(parse_loadavg("garbage"), None);
    }

    #[test]
    fn caches_are_read_from_a_sysfs_like_tree() {
        let dir = sysfs_caches(&[
            (1, "Data", "32K", 8),
            (1, "Instruction", "32K", 8),
            (2, "Unified", "1024K", 8),
        ]);
        let c = caches_from(dir.path());
        assert_eq!(c.len(), 3);
        let m = Machine {
            caches: c,
            ..Default::default()
        };
        assert_eq!(m.data_cache(1), Some(32 * 1024));
        assert_eq!(m.data_cache(2), Some(1024 * 1024));
        assert_eq!(m.data_cache(3), None);
    }
}
