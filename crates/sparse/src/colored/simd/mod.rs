//! SIMD distance projection over a batch of independent constraints (no two share a particle),
//! `LANES` = 16 at a time, by one of several kernels, and its scalar twin.
//!
//! # Theory
//! The XPBD distance update (Macklin, Müller, Chentanez 2016, eq. 18 with `|∇C| = 1`), the same
//! as [`solver_core::constraints::project_distance_pair`]: with `d = x_i - x_j`, `α̃ = α / h²`,
//!
//! ```text
//! Δλ = (l0 - |d| - α̃ λ) / (w_i + w_j + α̃),   λ += Δλ,
//! x_i += k w_i Δλ d / |d|,   x_j -= k w_j Δλ d / |d|        (skipped when |d| = 0 or w_i+w_j+α̃ = 0)
//! ```
//!
//! Independence makes the lanes' writes disjoint, so projecting a batch many lanes at a time
//! equals the scalar sweep over it up to floating-point rounding.
//!
//! # The kernel is a data-layout problem
//! Per constraint the arithmetic is ~30 flops, a few vector instructions; what costs is getting
//! two `Packed4` per constraint into lanes and back. [`EdgeBatch::new`] therefore sorts a
//! color's constraints by particle and cuts them into *quads* of four whose particles sit at
//! fixed offsets (runs `i+k, j+k`, pairs `i+2k, i+2k+1`, stride-2 `i+2k, j+2k`), loaded as whole
//! windows of consecutive particles, and gathers the rest 16 bytes at a time; a 4 x 4 transpose
//! per 128-bit part turns four such registers into x, y, z, w vectors (see `batch.rs` for the
//! layout). The layout serves every register width: a 512-bit register holds a quad's four
//! particles of one side, a 256-bit one two of them (a block is then two parts of eight lanes),
//! a 128-bit one one particle (four parts of four lanes, each particle one 16-byte load). Loads
//! never go lane by lane, and every memory access touches only the block's own particles, which
//! keeps the range contract safe for threads. The block driver and the update are written once
//! (`block.rs`) over each instruction set's primitives.
//!
//! Stride-2 quads load and store 16 bytes per particle: a window would also cover the odd
//! particles, which belong to other constraints that another thread may be moving. Quads are
//! sorted by kind so that nearly every block runs straight-line code for one kind.
//!
//! # Kernels and their choice
//! [`Kernel`] names them: the scalar twin; `portable` (`wide::f32x4`: SSE on x86-64, NEON on
//! aarch64); on x86-64 `avx2` (AVX2 + FMA) and `avx512` (AVX-512F). Every x86-64 build holds
//! all of them (the AVX ones as `#[target_feature]` functions), and [`Kernel::Auto`] is the best
//! one the running CPU has, detected once ([`Kernel::best`]), so a build for the default target
//! runs the same code as a `target-cpu=native` one.
//!
//! # Rounding and `enhanced-determinism`
//! By default the AVX kernels compute `1/|d|` as a reciprocal-square-root estimate plus one
//! Newton step and `1/(w_i+w_j+α̃)` as a reciprocal estimate plus one Newton step, and fuse
//! multiply-adds; they agree with the scalar twin to a few ulp (the tests allow a relative
//! 2e-5), and pinned particles (`w = 0`) keep their bits: their lanes move by -0.0. A skipped
//! lane's multiplier has +0.0 added (a masked store of the old value would be slow on AVX2),
//! which changes only a multiplier of -0.0, which the step never produces.
//! With the cargo feature `enhanced-determinism` ([`DETERMINISTIC`]) every kernel performs the
//! scalar twin's operations in its order (IEEE `sqrt` and division, no fused operation), so
//! every kernel on every instruction set gives the scalar twin's bits.
//!
//! In both modes a lane's result depends only on its own constraint's data, so it does not
//! depend on how a batch is cut at multiples of `LANES`, nor on the thread count.
//!
//! # Bending and tethers
//! [`BendBatch`] (dihedral and isometric bending, four particles per constraint) and
//! [`TetherBatch`] (tethers to pinned anchors) run on the same kernels and [`Kernel`] choice:
//! their updates are written once over a lane type (`lane.rs`) for the scalar twin and for each
//! instruction set's `block.rs` primitives, every particle gathered 16 bytes at a time and
//! transposed in registers. Their divisions and square roots are IEEE in both modes; products
//! are fused unless `enhanced-determinism` (see `bend.rs`, `tether.rs`).

mod batch;
mod bend;
mod block;
mod lane;
mod portable;
mod tether;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(test)]
mod bend_tests;
#[cfg(test)]
mod tests;

pub use batch::{BatchLayout, EdgeBatch};
pub use bend::{atan2_scalar, BendBatch, BendModel, ATAN_MAX_ERROR};
pub use block::Job;
pub use tether::TetherBatch;

use solver_core::error::{Result, WobbleError};
use solver_core::geometry::packed::Packed4;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::OnceLock;

/// Constraints per SIMD block: ranges handed to [`project_batch_range`] start at
/// multiples of it.
pub const LANES: usize = 16;

/// True when the build has the `enhanced-determinism` feature: every kernel gives the scalar
/// twin's bits.
pub const DETERMINISTIC: bool = cfg!(feature = "enhanced-determinism");

/// A distance-batch kernel: the scalar twin or one instruction set's vector kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// The best kernel the running CPU has ([`Kernel::best`]).
    #[default]
    Auto,
    /// The scalar twin: one constraint after another in batch order.
    Scalar,
    /// `wide::f32x4`: SSE on x86-64, NEON on aarch64.
    Portable,
    /// AVX2 + FMA, 256-bit vectors (x86-64).
    Avx2,
    /// AVX-512F, 512-bit vectors (x86-64).
    Avx512,
}

impl Kernel {
    /// Every kernel by name, `auto` first.
    pub const ALL: [Kernel; 5] = [
        Kernel::Auto,
        Kernel::Scalar,
        Kernel::Portable,
        Kernel::Avx2,
        Kernel::Avx512,
    ];

    /// The concrete kernels (all but `auto`), slowest first.
    pub const CONCRETE: [Kernel; 4] = [
        Kernel::Scalar,
        Kernel::Portable,
        Kernel::Avx2,
        Kernel::Avx512,
    ];

    /// The name used on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Auto => "auto",
            Kernel::Scalar => "scalar",
            Kernel::Portable => "portable",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }

    /// The CPU features the kernel needs, as people write them.
    pub fn needs(self) -> &'static str {
        match self {
            Kernel::Auto | Kernel::Scalar | Kernel::Portable => "nothing",
            Kernel::Avx2 => "avx2 and fma",
            Kernel::Avx512 => "avx512f",
        }
    }

    /// Whether the running CPU can run the kernel (`auto` always can).
    pub fn available(self) -> bool {
        match self {
            Kernel::Auto | Kernel::Scalar | Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2 | Kernel::Avx512 => false,
        }
    }

    /// The fastest kernel the running CPU has (AVX-512, else AVX2, else portable), detected
    /// on the first call and cached.
    pub fn best() -> Kernel {
        static BEST: OnceLock<Kernel> = OnceLock::new();
        *BEST.get_or_init(|| {
            [Kernel::Avx512, Kernel::Avx2]
                .into_iter()
                .find(|k| k.available())
                .unwrap_or(Kernel::Portable)
        })
    }

    /// The concrete kernel this choice runs: `auto` becomes [`Kernel::best`]; a kernel the CPU
    /// lacks is refused, naming what the CPU has.
    pub fn resolve(self) -> Result<Kernel> {
        match self {
            Kernel::Auto => Ok(Kernel::best()),
            k if k.available() => Ok(k),
            k => Err(WobbleError::KernelUnavailable {
                kernel: k.name(),
                needs: k.needs(),
                has: cpu_features().join(" "),
            }),
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kernel {
    type Err = WobbleError;
    fn from_str(s: &str) -> Result<Self> {
        solver_core::error::parse_named("kernel", s, &Kernel::ALL, Kernel::name)
    }
}

/// The SIMD-related features the running CPU reports (x86-64: SSE2 to AVX-512; aarch64: NEON),
/// those it has only, in that order.
pub fn cpu_features() -> Vec<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let seen = [
            ("sse2", has!("sse2")),
            ("sse4.1", has!("sse4.1")),
            ("sse4.2", has!("sse4.2")),
            ("avx", has!("avx")),
            ("avx2", has!("avx2")),
            ("fma", has!("fma")),
            ("avx512f", has!("avx512f")),
            ("avx512vl", has!("avx512vl")),
        ];
        seen.into_iter().filter(|s| s.1).map(|s| s.0).collect()
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("neon") {
            vec!["neon"]
        } else {
            Vec::new()
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Vec::new()
    }
}

/// The [`LaneBatch`] sizes of `$batch`: its own `len` and `particles_needed`.
macro_rules! lane_batch_sizes {
    ($batch:ty) => {
        fn len(&self) -> usize {
            <$batch>::len(self)
        }
        fn particles_needed(&self) -> usize {
            <$batch>::particles_needed(self)
        }
    };
}
use lane_batch_sizes;

/// A batch of independent constraints laid out for the kernels ([`EdgeBatch`], [`BendBatch`],
/// [`TetherBatch`]): what [`project_batch_range`] needs of it.
pub trait LaneBatch: Sized {
    /// Constraints in the batch.
    fn len(&self) -> usize;
    /// Whether the batch holds no constraints.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Particles its indices need (the largest index + 1).
    fn particles_needed(&self) -> usize;
    /// The scalar twin: the positions of `job.range` one after another, in order.
    ///
    /// # Safety
    /// As [`project_batch_range`] for `job.range`, which lies within the batch.
    unsafe fn project_scalar(job: Job<Self>);
    /// The vector kernel `kernel` (neither `auto` nor `scalar`) on `job.range`, which starts at
    /// a multiple of [`LANES`] and lies within the batch.
    ///
    /// # Safety
    /// `kernel` is available; otherwise as [`project_batch_range`].
    unsafe fn project_vector(kernel: Kernel, job: Job<Self>);
}

impl LaneBatch for EdgeBatch {
    lane_batch_sizes!(EdgeBatch);
    unsafe fn project_scalar(job: Job<Self>) {
        let Job { x, b, lambda, .. } = job;
        for c in job.range {
            solver_core::constraints::project_distance_pair(
                &mut *x.add(b.i[c] as usize),
                &mut *x.add(b.j[c] as usize),
                b.rest[c],
                b.compliance[c] * job.inv_dt2,
                &mut *lambda.add(c),
                job.k,
            );
        }
    }
    unsafe fn project_vector(kernel: Kernel, job: Job<Self>) {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => avx512::project_range(job),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => avx2::project_range(job),
            _ => block::project_range::<portable::Portable>(job),
        }
    }
}

/// Projects a whole batch with `kernel` (`auto`: the best one the CPU has, [`Kernel::best`];
/// `scalar`: the scalar twin); refuses a kernel the CPU lacks. `lambda` is indexed like the
/// batch (`lambda[k]` belongs to the constraint at position `k`).
///
/// # Panics
/// When `x` is shorter than [`LaneBatch::particles_needed`] or `lambda` shorter than the batch
/// (a caller bug: the batch was built for other particles).
pub fn project_batch_with<B: LaneBatch>(
    kernel: Kernel,
    x: &mut [Packed4],
    b: &B,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) -> Result<()> {
    let kernel = kernel.resolve()?;
    assert!(
        lambda.len() >= b.len(),
        "one multiplier per batch constraint"
    );
    assert!(
        x.len() >= b.particles_needed(),
        "batch indices in range of the particles"
    );
    // SAFETY: lengths checked above; the batch's indices were checked when it was built and
    // its constraints are independent; we hold both slices exclusively; `kernel` is available
    // (resolved above).
    unsafe {
        project_batch_range(
            kernel,
            x.as_mut_ptr(),
            b,
            0..b.len(),
            lambda.as_mut_ptr(),
            inv_dt2,
            k,
        )
    };
    Ok(())
}

/// Projects the constraints at positions `range` of a batch with `kernel` (`auto`: the best
/// one); the unit of work of the parallel colored solver.
///
/// Each constraint's result depends only on the particles and multiplier it reads, never on
/// how the batch is cut, as long as every range starts at a multiple of [`LANES`] (so 1, 2 or N
/// threads give bit-identical states). A range that starts elsewhere runs its positions up to
/// the next multiple of `LANES` through the scalar twin (correct; bit-identical only with
/// `enhanced-determinism`); a range end past the batch is clipped.
///
/// # Safety
/// `kernel` is available on the running CPU ([`Kernel::available`]); `x` must point to at least
/// [`LaneBatch::particles_needed`] particles and `lambda` to at least `range.end` multipliers
/// (positions of this batch), and no other thread may access the particles (a tether's anchor
/// included) or multipliers of this range during the call.
pub unsafe fn project_batch_range<B: LaneBatch>(
    kernel: Kernel,
    x: *mut Packed4,
    b: &B,
    range: Range<usize>,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    debug_assert!(kernel.available());
    let end = range.end.min(b.len());
    let kernel = match kernel {
        Kernel::Auto => Kernel::best(),
        k => k,
    };
    let start = match kernel {
        Kernel::Scalar => end,
        _ => range.start.next_multiple_of(LANES).min(end),
    };
    let job = |range| Job {
        x,
        b,
        range,
        lambda,
        inv_dt2,
        k,
    };
    B::project_scalar(job(range.start.min(start)..start));
    if start < end {
        B::project_vector(kernel, job(start..end));
    }
}
