//! The bandwidth side of the study: bytes each solver moves per projection (from its data
//! layout), the bandwidth the machine delivers from L2, L3 and memory (a streaming kernel run
//! here), and the time per projection that bandwidth alone would take.
//!
//! Byte model (per iteration, every constraint projected once, each particle's data assumed
//! to stay in cache between its constraints — the least traffic the layout allows):
//! - `gs`: per constraint the pair (2 x 4 B), rest length and compliance (4 B each) and the
//!   multiplier λ read and written (2 x 4 B): 24 B; per particle its position read and written
//!   back (2 x 16 B): 32 B.
//! - `colored`: the batch's two index arrays, rest length, compliance (4 x 4 B) and λ read and
//!   written (2 x 4 B): 24 B per constraint; 32 B per particle (the tiled sweep reads and
//!   writes each particle about once per iteration; the whole-body sweep once per color, so
//!   its real traffic is higher).
//! - `jacobi`: phase 1 reads the constraint's incidence row (two 4 B columns, an 8 B row
//!   pointer), rest length and compliance (8 B), λ read and written (8 B) and writes two
//!   16 B corrections; phase 2 reads the transposed incidence (two 4 B columns and two 4 B
//!   entry indices per constraint) and the two corrections again: 24 + 8 + 8 + 32 + 16 + 32 =
//!   120 B per constraint; per particle the position read in phase 1 (16 B), read and written
//!   in phase 2 (32 B), its transposed row pointer (8 B) and count (4 B): 60 B.
//!
//! Bytes per projection = (per-constraint bytes x C + per-particle bytes x V) / C, and the
//! bound is that over the copy bandwidth (read + write) of the smallest level that holds one
//! iteration's bytes.

use crate::measure::machine::Machine;
use std::hint::black_box;
use std::time::Instant;

/// Bytes per constraint and per particle one iteration of `solver` moves, if modelled.
pub fn layout_bytes(solver: &str) -> Option<(f64, f64)> {
    match solver {
        "gs" | "gs-shuffled" => Some((24.0, 32.0)),
        "colored" => Some((24.0, 32.0)),
        "jacobi" => Some((120.0, 60.0)),
        _ => None,
    }
}

/// The formula of [`layout_bytes`] as text, for the report.
pub fn formula(solver: &str) -> Option<String> {
    layout_bytes(solver).map(|(c, p)| format!("{solver}: ({c:.0} C + {p:.0} V) / C bytes"))
}

/// Bytes per projection of `solver` on a body of `v` particles and `c` constraints.
pub fn bytes_per_projection(solver: &str, v: f64, c: f64) -> Option<f64> {
    layout_bytes(solver).map(|(bc, bp)| (bc * c + bp * v) / c.max(1.0))
}

/// One measured bandwidth.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Bandwidth {
    /// `L2`, `L3` or `memory`.
    pub level: String,
    /// Bytes of the arrays streamed (the source; the copy writes as many again).
    pub bytes: u64,
    /// Read bandwidth (sum over the array), GB/s (1e9 bytes).
    pub read_gbs: f64,
    /// Copy bandwidth, read plus written bytes, GB/s.
    pub copy_gbs: f64,
}

/// Best-of-`reps` time of `f` in seconds.
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Streams arrays of `bytes` bytes: read (a sum in 8 independent lanes so the adds do not
/// limit it) and copy, repeated until about `min_bytes` have moved per timing, best of 5.
pub fn stream(level: &str, bytes: u64, min_bytes: u64) -> Bandwidth {
    let n = (bytes / 4).max(64) as usize;
    let src: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut dst = vec![0f32; n];
    let passes = (min_bytes / (4 * n as u64)).max(1) as usize;
    let read_s = best(5, || {
        for _ in 0..passes {
            let mut acc = [0f32; 8];
            for c in black_box(&src).chunks_exact(8) {
                for k in 0..8 {
                    acc[k] += c[k];
                }
            }
            black_box(acc);
        }
    });
    let copy_s = best(5, || {
        for _ in 0..passes {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        }
    });
    let moved = (passes * n * 4) as f64;
    Bandwidth {
        level: level.to_string(),
        bytes: 4 * n as u64,
        read_gbs: moved / read_s / 1e9,
        copy_gbs: 2.0 * moved / copy_s / 1e9,
    }
}

/// L2, L3 and memory bandwidths: arrays of a quarter of L2, a quarter of L3 and 8x L3 (L2
/// 1 MiB and L3 32 MiB when the sizes are unknown), each timing moving at least its array and
/// about `2e9 x scale` bytes (`scale` < 1 shortens a quick run; the memory array stays 8x L3,
/// since a smaller one is partly served by L3).
pub fn measure(m: &Machine, scale: f64) -> Vec<Bandwidth> {
    let l2 = m.data_cache(2).unwrap_or(1 << 20);
    let l3 = m.data_cache(3).unwrap_or(32 << 20);
    let memory = (l3 * 8).max(256 << 20);
    let min = |b: u64| ((b as f64).max(2e9 * scale)) as u64;
    vec![
        stream("L2", l2 / 4, min(l2 / 4)),
        stream("L3", l3 / 4, min(l3 / 4)),
        stream("memory", memory, min(memory)),
    ]
}

/// The level whose bandwidth bounds a working set of `bytes`: the smallest measured level
/// whose cache holds it (L2 per core, L3), else memory.
pub fn level_for<'a>(m: &Machine, bw: &'a [Bandwidth], bytes: f64) -> Option<&'a Bandwidth> {
    let fits = |lvl: u32| m.data_cache(lvl).is_some_and(|c| bytes <= c as f64);
    let name = if fits(2) {
        "L2"
    } else if fits(3) {
        "L3"
    } else {
        "memory"
    };
    bw.iter().find(|b| b.level == name)
}

/// The bandwidth bound in ns per projection of `solver` on a body of `v` particles and `c`
/// constraints, with the level it comes from.
pub fn bound_ns(
    m: &Machine,
    bw: &[Bandwidth],
    solver: &str,
    v: f64,
    c: f64,
) -> Option<(f64, String)> {
    let bpp = bytes_per_projection(solver, v, c)?;
    let b = level_for(m, bw, bpp * c)?;
    Some((bpp / b.copy_gbs, b.level.clone()))
}

/// A point is bandwidth-bound when the bandwidth bound is at least this fraction of its
/// measured time (the memory system alone accounts for most of it).
pub const BOUND_FRACTION: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_model_adds_particles_over_constraints() {
        // A 2x2 cloth-like body: 4 particles, 5 constraints.
        let b = bytes_per_projection("gs", 4.0, 5.0).unwrap();
        assert!((b - (24.0 * 5.0 + 32.0 * 4.0) / 5.0).abs() < 1e-9);
        assert!(bytes_per_projection("jacobi", 4.0, 5.0).unwrap() > b);
        assert!(bytes_per_projection("gauss-newton-direct", 4.0, 5.0).is_none());
    }

    #[test]
    fn streaming_gives_positive_bandwidth_and_levels_follow_cache_sizes() {
        let bw = stream("L2", 64 << 10, 1 << 20);
        assert!(bw.read_gbs > 0.0 && bw.copy_gbs > 0.0, "{bw:?}");
        let m = Machine {
            caches: vec![
                crate::measure::machine::Cache {
                    level: 2,
                    kind: "Unified".into(),
                    bytes: 1 << 20,
                    shared_cpus: String::new(),
                },
                crate::measure::machine::Cache {
                    level: 3,
                    kind: "Unified".into(),
                    bytes: 32 << 20,
                    shared_cpus: String::new(),
                },
            ],
            ..Default::default()
        };
        let all: Vec<Bandwidth> = ["L2", "L3", "memory"]
            .iter()
            .map(|l| Bandwidth {
                level: l.to_string(),
                bytes: 1,
                read_gbs: 1.0,
                copy_gbs: 1.0,
            })
            .collect();
        assert_eq!(level_for(&m, &all, 1e5).unwrap().level, "L2");
        assert_eq!(level_for(&m, &all, 1e7).unwrap().level, "L3");
        assert_eq!(level_for(&m, &all, 1e9).unwrap().level, "memory");
    }
}
