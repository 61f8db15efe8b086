//! [`TetherBatch`]: tethers (`C = |x_i - x_a| - L <= 0`, see [`Tethers`]) whose particles `i`
//! are distinct and none of which is an anchor of the batch, projected [`LANES`] at a time.
//!
//! Many tethers share an anchor (every particle hangs from the same few pins), so a coloring
//! that keeps constraints sharing a particle apart needs one color per tether of an anchor. But
//! an anchor is pinned (`w_a = 0`): the update never moves it, so tethers sharing it are
//! independent after all. A batch is therefore "the `r`-th tether of every particle", a handful
//! of batches per table, and the kernel reads the anchors and writes only the particles `i`.
//! Should an anchor be free after all (a pin released after the solver was prepared), the block
//! holding it goes through the scalar twin, which moves the anchor too, constraint after
//! constraint: then the batch is a Gauss-Seidel sweep in batch order, correct but not
//! thread-safe, so callers run tether batches on one thread.
//!
//! Each particle is one 16-byte gather and the lane update is the one of
//! [`solver_core::constraints::project_tethers`] (skipped while `C <= 0`).

use super::block::arr4;
use super::block::{Isa, Job};
use super::lane::{positive_finite, Lane, V3, W};
use super::{Kernel, LaneBatch, LANES};
use solver_core::constraints::{Tethers, MIN_DENOMINATOR};
use solver_core::error::check_index;
use solver_core::error::{Result, WobbleError};
use solver_core::geometry::packed::Packed4;

/// One batch of tethers of one table, laid out for the kernels; `ids[k]` is the table's id of
/// the tether at position `k` (multiplier `lambda[k]` in every call).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TetherBatch {
    /// Local id (in its table) of the tether at each position.
    pub ids: Vec<u32>,
    i: Vec<u32>,
    a: Vec<u32>,
    rest: Vec<f32>,
    compliance: Vec<f32>,
    particles_needed: usize,
}

impl TetherBatch {
    /// A batch of tethers `ids` of `table`: checks that they are in range for `particles`
    /// particles, that their particles are distinct and that none is an anchor of the batch.
    pub fn new(table: &Tethers, ids: &[u32], particles: usize) -> Result<Self> {
        let mut items = Vec::with_capacity(ids.len());
        let mut moved: Vec<(u32, u32)> = Vec::with_capacity(ids.len());
        let mut anchors: Vec<u32> = Vec::with_capacity(ids.len());
        for (k, &c) in ids.iter().enumerate() {
            check_index("batch tether", k, c as usize, table.pairs.len())?;
            let [i, a] = table.pairs[c as usize];
            for p in [i, a] {
                check_index("tether", c as usize, p as usize, particles)?;
            }
            moved.push((i, k as u32));
            anchors.push(a);
            items.push((
                i,
                a,
                table.rest[c as usize],
                table.compliance[c as usize],
                c,
            ));
        }
        moved.sort_unstable();
        anchors.sort_unstable();
        let repeated = moved
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[1])
            .chain(
                moved
                    .iter()
                    .copied()
                    .filter(|m| anchors.binary_search(&m.0).is_ok()),
            )
            .min_by_key(|m| m.1);
        if let Some((particle, k)) = repeated {
            return Err(WobbleError::RepeatedParticle {
                kind: "tether batch (a particle moved twice or also an anchor)",
                index: ids[k as usize] as usize,
                particle,
            });
        }
        items.sort_unstable_by_key(|it| (it.0, it.4));
        let mut b = TetherBatch {
            particles_needed: items
                .iter()
                .map(|it| it.0.max(it.1) as usize + 1)
                .max()
                .unwrap_or(0),
            ..Default::default()
        };
        for (i, a, rest, compliance, c) in items {
            b.ids.push(c);
            b.i.push(i);
            b.a.push(a);
            b.rest.push(rest);
            b.compliance.push(compliance);
        }
        Ok(b)
    }

    /// The tethers of `table` cut into batches: batch `r` holds the `r`-th tether (in table
    /// order) of every particle. `None` when some tether's particle is another tether's anchor
    /// (no such cut is independent then).
    pub fn split(table: &Tethers, particles: usize) -> Result<Option<Vec<TetherBatch>>> {
        let mut anchor = vec![false; particles];
        for &[_, a] in &table.pairs {
            if let Some(f) = anchor.get_mut(a as usize) {
                *f = true;
            }
        }
        let mut seen = vec![0u32; particles];
        let mut ids: Vec<Vec<u32>> = Vec::new();
        for (c, &[i, _]) in table.pairs.iter().enumerate() {
            let Some(r) = seen.get_mut(i as usize) else {
                return Err(WobbleError::IndexOutOfRange {
                    what: "tether",
                    index: c,
                    value: i as u64,
                    len: particles,
                });
            };
            if anchor[i as usize] {
                return Ok(None);
            }
            if ids.len() <= *r as usize {
                ids.push(Vec::new());
            }
            ids[*r as usize].push(c as u32);
            *r += 1;
        }
        ids.iter()
            .map(|ids| TetherBatch::new(table, ids, particles))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Number of tethers.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// `[particle, anchor]` of the tether at position `k`.
    pub fn pair(&self, k: usize) -> [u32; 2] {
        [self.i[k], self.a[k]]
    }

    /// The shortest particle slice the projections accept (largest index + 1).
    pub fn particles_needed(&self) -> usize {
        self.particles_needed
    }
}

/// The tether update of one lane (or vector of lanes): returns `(Δλ-step s, new λ, ok)`,
/// where the particle moves by `s w_i d` and the anchor by `-s w_a d`, `d = x_i - x_a`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tether<L: Lane>(
    d: V3<L>,
    wi: L,
    wa: L,
    rest: L,
    compliance: L,
    lam: L,
    inv_dt2: L,
    k: L,
) -> (L, L) {
    let zero = L::splat(0.0);
    let len = d.dot(d).sqrt();
    let value = len.sub(rest);
    let alpha = compliance.mul(inv_dt2);
    let denom = wi.add(wa).add(alpha);
    let ok = L::and(
        L::and(zero.lt(value), zero.lt(len)),
        positive_finite(denom, MIN_DENOMINATOR),
    );
    let dl = value.mul(L::splat(-1.0)).sub(alpha.mul(lam)).div(denom);
    let s = L::select(ok, k.mul(dl).div(len), zero);
    // Not `select(ok, lam + Δλ, lam)`, which stored back over `lam` becomes a masked store
    // (`vmaskmovps`, slow on AVX2); the twin runs the same code, so the bits agree.
    (s, lam.add(L::select(ok, dl, zero)))
}

/// The scalar twin on position `c`.
///
/// # Safety
/// As [`super::project_batch_range`] for position `c`.
#[inline(always)]
unsafe fn project_one(
    x: *mut Packed4,
    b: &TetherBatch,
    c: usize,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    let (pi, pa) = (*x.add(b.i[c] as usize), *x.add(b.a[c] as usize));
    let d = V3([pi.x, pi.y, pi.z]).sub(V3([pa.x, pa.y, pa.z]));
    let (s, lam) = tether(
        d,
        pi.w,
        pa.w,
        b.rest[c],
        b.compliance[c],
        *lambda.add(c),
        inv_dt2,
        k,
    );
    *lambda.add(c) = lam;
    let q = &mut *x.add(b.i[c] as usize);
    [q.x, q.y, q.z] = d.scale_add(s * pi.w, V3([pi.x, pi.y, pi.z])).0;
    if pa.w != 0.0 {
        let q = &mut *x.add(b.a[c] as usize);
        [q.x, q.y, q.z] = d.scale_add(-(s * pa.w), V3([pa.x, pa.y, pa.z])).0;
    }
}

/// The vector body of [`super::project_batch_range`] on instruction set `I`.
///
/// # Safety
/// `I`'s instructions are available; otherwise as [`super::project_batch_range`].
#[inline(always)]
pub(super) unsafe fn project_range<I: Isa>(job: Job<TetherBatch>) {
    let (x, b, range, lambda, inv_dt2, k) = job.vector_parts();
    let xf = x.cast::<f32>();
    let (vdt, vk) = (W::<I>::splat(inv_dt2), W::<I>::splat(k));
    let pv = I::WIDTH / 4;
    let all = I::lt(I::splat(0.0), I::splat(1.0));
    let mut base = range.start;
    'blocks: while base + LANES <= range.end {
        let mut parts = [[I::splat(0.0); 4]; 2 * LANES / 4];
        // Loads first: a block with a free anchor runs through the twin before anything moves.
        for part in 0..LANES / I::WIDTH {
            let addr = |v: &Vec<u32>, m: usize, q: usize| {
                xf.add(4 * *v.get_unchecked(base + 4 * (part * pv + q) + m) as usize)
            };
            let pa = I::transpose(arr4!(m => I::gather(|q| addr(&b.a, m, q).cast_const())));
            if I::any(I::and_nonzero(all, pa[3])) {
                for c in base..base + LANES {
                    project_one(x, b, c, lambda, inv_dt2, k);
                }
                base += LANES;
                continue 'blocks;
            }
            parts[2 * part] = pa;
            parts[2 * part + 1] =
                I::transpose(arr4!(m => I::gather(|q| addr(&b.i, m, q).cast_const())));
        }
        for part in 0..LANES / I::WIDTH {
            let at = base + part * I::WIDTH;
            let (pa, pi) = (parts[2 * part], parts[2 * part + 1]);
            let v3 = |p: [I::V; 4]| V3([W::<I>::new(p[0]), W::new(p[1]), W::new(p[2])]);
            let (xi, xa) = (v3(pi), v3(pa));
            let ld = |v: &Vec<f32>| super::bend::load::<I>(v.as_ptr().add(at));
            let d = xi.sub(xa);
            let wi = W::<I>::new(pi[3]);
            let (s, lam) = tether(
                d,
                wi,
                W::new(pa[3]),
                ld(&b.rest),
                ld(&b.compliance),
                W::new(I::load(lambda.add(at))),
                vdt,
                vk,
            );
            I::store(lambda.add(at), lam.0);
            let [mx, my, mz] = d.scale_add(s.mul(wi), xi).0;
            let out = I::transpose([mx.0, my.0, mz.0, pi[3]]);
            // Unrolled: a loop over `m` keeps `out` in memory, indexed.
            arr4!(m => I::scatter(out[m], |q| {
                xf.add(4 * *b.i.get_unchecked(base + 4 * (part * pv + q) + m) as usize)
            }));
        }
        base += LANES;
    }
    for c in base..range.end {
        project_one(x, b, c, lambda, inv_dt2, k);
    }
}

#[cfg(target_arch = "x86_64")]
/// [`project_range`] on this instruction set.
///
/// # Safety
/// The CPU has AVX2 and FMA; otherwise as [`project_range`].
#[target_feature(enable = "avx2,fma")]
unsafe fn project_range_avx2(job: Job<TetherBatch>) {
    project_range::<super::avx2::Avx2>(job)
}

#[cfg(target_arch = "x86_64")]
/// [`project_range`] on this instruction set.
///
/// # Safety
/// The CPU has AVX-512F; otherwise as [`project_range`].
#[target_feature(enable = "avx512f")]
unsafe fn project_range_avx512(job: Job<TetherBatch>) {
    project_range::<super::avx512::Avx512>(job)
}

impl LaneBatch for TetherBatch {
    super::lane_batch_sizes!(TetherBatch);
    unsafe fn project_scalar(job: Job<Self>) {
        for c in job.range {
            project_one(job.x, job.b, c, job.lambda, job.inv_dt2, job.k);
        }
    }
    unsafe fn project_vector(kernel: Kernel, job: Job<Self>) {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => project_range_avx512(job),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => project_range_avx2(job),
            _ => project_range::<super::portable::Portable>(job),
        }
    }
}
