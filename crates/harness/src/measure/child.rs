//! Child processes: `wobble step` runs measured one per process (so that each has its own peak
//! resident set size) and the same under `valgrind --tool=cachegrind`.
//!
//! Peak RSS comes from the kernel's accounting of the waited-for child (`wait4`'s
//! `ru_maxrss`, in KiB on Linux), which is the child's VmHWM at exit. A child is killed when
//! it runs past its time limit, and (through `PR_SET_PDEATHSIG`) when the harness itself dies,
//! so an interrupted sweep leaves no orphan running.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Exit {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal (not by us).
    Signal(i32),
    /// Ran past its limit and was killed.
    TimedOut,
}

/// What a child left behind.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// How it ended.
    pub exit: Exit,
    /// Everything it printed on stdout.
    pub stdout: String,
    /// Everything it printed on stderr.
    pub stderr: String,
    /// Peak resident set size in MiB.
    pub peak_rss_mb: f64,
    /// Wall time in seconds.
    pub wall_s: f64,
}

impl Outcome {
    /// True when it exited with code 0.
    pub fn ok(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// The error message of a failed `wobble` child (its "wobble: error: ..." line), or a
    /// description of how it ended.
    pub fn failure(&self) -> String {
        match &self.exit {
            Exit::TimedOut => format!("timed out after {:.0} s", self.wall_s),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::Code(c) => {
                let line = self
                    .stderr
                    .lines()
                    .find_map(|l| l.strip_prefix("wobble: error: "))
                    .map(|s| s.to_string())
                    .or_else(|| {
                        self.stderr
                            .lines()
                            .rev()
                            .find(|l| !l.trim().is_empty())
                            .map(|s| s.to_string())
                    });
                match line {
                    Some(l) => l,
                    None => format!("exited with code {c}"),
                }
            }
        }
    }
}

fn reader(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        s.push_str(&String::from_utf8_lossy(&buf));
        s
    })
}

/// Runs `cmd` to completion or until `limit`, collecting its output and peak RSS.
pub fn run(mut cmd: Command, limit: Duration) -> std::io::Result<Outcome> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: prctl is async-signal-safe; the closure touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let out = reader(child.stdout.take().expect("piped stdout"));
    let err = reader(child.stderr.take().expect("piped stderr"));
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    let mut nap = Duration::from_micros(500);
    loop {
        // SAFETY: pid is our own child; status and usage are valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if !timed_out && start.elapsed() > limit {
            timed_out = true;
            // SAFETY: signalling our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
    let wall_s = start.elapsed().as_secs_f64();
    let exit = if timed_out {
        Exit::TimedOut
    } else if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(-1)
    };
    Ok(Outcome {
        exit,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        peak_rss_mb: usage.ru_maxrss as f64 / 1024.0,
        wall_s,
    })
}

/// The running `wobble` executable, for child runs.
pub fn wobble_exe() -> std::io::Result<std::path::PathBuf> {
    std::env::current_exe()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_exit_code_and_timeout_are_reported() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo hi; echo 'wobble: error: bad' >&2; exit 3"]);
        let o = run(c, Duration::from_secs(10)).unwrap();
        assert_eq!(o.exit, Exit::Code(3));
        assert_eq!(o.stdout.trim(), "hi");
        assert_eq!(o.failure(), "bad");
        assert!(o.peak_rss_mb > 0.0);
        let mut c = Command::new("sleep");
        c.arg("5");
        let o = run(c, Duration::from_millis(100)).unwrap();
        assert_eq!(o.exit, Exit::TimedOut);
        assert!(o.wall_s < 4.0);
    }
}
