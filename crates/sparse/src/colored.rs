//! Graph-colored Gauss-Seidel: colors in a fixed sequence, SIMD lanes and threads inside each.
//!
//! Theory: the XPBD update `Δλ = (-C - α̃λ) / (Σ w |∇C|² + α̃)`, `Δx_k = k w_k ∇_k C Δλ`
//! (Macklin, Müller, Chentanez 2016) projected color after color. Constraints of one color share
//! no particle (see [`crate::coloring`]), so projecting them one after another or all at once
//! gives the same result: Gauss-Seidel between colors, parallel and SIMD inside a color.
//! The distance constraints of a color form one `EdgeBatch` for solver-core's SIMD kernel
//! (`LANES` constraints per vector); other kinds go through the scalar `project_generic`.
//!
//! Each color runs whole; a color larger than `parallel_threshold` is cut into blocks of
//! `chunk` constraints (a multiple of `LANES`, independent of the thread count) run on the
//! solver's private rayon pool. The kernel's result per constraint does not depend on how a
//! batch is cut at multiples of `LANES`, so 1, 2 and N threads agree bit for bit.
//!
//! (A tiled single-thread schedule, tile after tile and color after color inside a tile, was
//! tried for cache locality and removed: it gained nothing measurable where the mesh fits in
//! the last-level cache, and the SIMD batch reorders each color's constraints into quads, so a
//! tile is no longer a contiguous piece of a batch.)
//!
//! The batches copy rest lengths and compliances at prepare: after changing them on a body,
//! call `Body::topology_changed` so the solver rebuilds.

use crate::coloring::{Coloring, ColoringReport};
use crate::incidence::Incidence;
use crate::parallel::{Pool, SharedMut};
use crate::{ColoringMethod, SolverOptions};
use solver_core::constraints::project_generic;
use solver_core::simd::{
    project_distance_batch_range, project_distance_batch_range_scalar, EdgeBatch,
};
use solver_core::{Constraints, Packed4, SolveState, Solver, WobbleError};

/// One color's work: a SIMD batch of its distance constraints and its other constraints.
#[derive(Clone, Debug, Default)]
struct ColorWork {
    batch: EdgeBatch,
    /// Where this batch's multipliers start in the solver's batch-order buffer.
    lambda_start: usize,
    /// Other kinds: (index in `Constraints::extra`, local id, global id).
    generic: Vec<[u32; 3]>,
}

/// The graph-colored Gauss-Seidel solver (`colored`).
#[derive(Debug)]
pub struct Colored {
    pool: Pool,
    opts: SolverOptions,
    prepared: Option<u64>,
    particles: usize,
    work: Vec<ColorWork>,
    /// Multipliers of the distance constraints in batch order, color after color.
    lambda: Vec<f32>,
    report: ColoringReport,
}

impl Colored {
    /// A colored solver with `opts.threads` threads.
    pub fn new(opts: &SolverOptions) -> Result<Self, WobbleError> {
        opts.validate()?;
        Ok(Colored {
            pool: Pool::new(opts.threads)?,
            opts: opts.clone(),
            prepared: None,
            particles: 0,
            work: Vec::new(),
            lambda: Vec::new(),
            report: ColoringReport::default(),
        })
    }

    /// Color count, balance and SIMD split of the last prepared coloring.
    pub fn report(&self) -> &ColoringReport {
        &self.report
    }

    /// Projects constraints `range` of one color's batch.
    ///
    /// # Safety
    /// `x` holds `self.particles` particles and `lambda` the batch's multipliers; no other
    /// thread touches the particles or multipliers of this range during the call.
    #[inline]
    unsafe fn project_range(
        simd: bool,
        x: *mut Packed4,
        b: &EdgeBatch,
        range: std::ops::Range<usize>,
        lambda: *mut f32,
        inv_dt2: f32,
        k: f32,
    ) {
        if simd {
            project_distance_batch_range(x, b, range, lambda, inv_dt2, k);
        } else {
            project_distance_batch_range_scalar(x, b, range, lambda, inv_dt2, k);
        }
    }

    /// Projects other kinds' constraints `list` one after another.
    fn project_generic_list(s: &mut SolveState, list: &[[u32; 3]]) {
        for &[t, c, g] in list {
            let kind = s.constraints.extra[t as usize].as_ref();
            let alpha = kind.compliance(c as usize) * s.inv_dt2;
            project_generic(
                kind,
                c as usize,
                s.x,
                &mut s.lambda[g as usize],
                alpha,
                s.stiffness,
            );
        }
    }

    /// One iteration, color after color, large colors split across the pool's threads.
    fn iterate_by_color(&mut self, s: &mut SolveState) {
        let (inv_dt2, k, simd) = (s.inv_dt2, s.stiffness, self.opts.simd);
        let chunk = self.opts.chunk;
        for work in &self.work {
            // Fresh pointers per color: `s.x` is used directly by the generic path below.
            let x = SharedMut::new(s.x);
            let lambda = SharedMut::new(&mut self.lambda);
            let b = &work.batch;
            let blocks = b.len().div_ceil(chunk);
            let parallel = b.len() >= self.opts.parallel_threshold;
            let start = work.lambda_start;
            self.pool.for_each_block(blocks, parallel, |block| {
                let range = block * chunk..((block + 1) * chunk).min(b.len());
                // SAFETY: `x` has `self.particles` particles (checked by `iterate`) and every
                // batch index is below that (checked by `EdgeBatch::new` at prepare). The
                // constraints of one color share no particle (coloring checked at prepare) and
                // blocks are disjoint ranges of the batch and of its multipliers, so no two
                // threads touch the same particle or multiplier. `s.x` and `self.lambda` are
                // not otherwise accessed while the blocks run.
                unsafe {
                    Colored::project_range(
                        simd,
                        x.get(),
                        b,
                        range,
                        lambda.get().add(start),
                        inv_dt2,
                        k,
                    )
                }
            });
            Colored::project_generic_list(s, &work.generic);
        }
    }
}

impl Solver for Colored {
    fn name(&self) -> String {
        "colored".into()
    }

    fn prepare(
        &mut self,
        constraints: &Constraints,
        particles: usize,
        topology_id: u64,
    ) -> Result<(), WobbleError> {
        self.prepared = None;
        let nd = constraints.distance.len();
        let coloring = {
            let inc = Incidence::without_entries(constraints, particles)?;
            let coloring = match self.opts.coloring {
                ColoringMethod::Greedy => Coloring::greedy(&inc),
                ColoringMethod::Randomized => {
                    Coloring::randomized(&inc, self.opts.seed, self.opts.palette_shrink)?
                }
            };
            coloring.check(&inc)?;
            coloring
        };
        let offsets = constraints.offsets();
        self.work.clear();
        let mut lambda_start = 0;
        // Global kinds (empty incidence rows) are projected after the sweep, not in a color.
        let global = |g: u32| {
            let g = g as usize;
            g >= nd && {
                let t = offsets.partition_point(|&o| o <= g) - 2;
                constraints.extra[t].is_global()
            }
        };
        for k in 0..coloring.colors() {
            let ids: Vec<u32> = coloring
                .color(k)
                .iter()
                .copied()
                .filter(|&g| !global(g))
                .collect();
            let split = ids.partition_point(|&g| (g as usize) < nd);
            let batch = EdgeBatch::new(&constraints.distance, &ids[..split], particles)?;
            let generic = ids[split..]
                .iter()
                .map(|&g| {
                    // offsets[0] = 0 and offsets[1] = nd: extra table t starts at offsets[t + 1].
                    let t = offsets.partition_point(|&o| o <= g as usize) - 2;
                    [t as u32, g - offsets[t + 1] as u32, g]
                })
                .collect();
            let len = batch.len();
            self.work.push(ColorWork {
                batch,
                lambda_start,
                generic,
            });
            lambda_start += len;
        }
        self.lambda = vec![0.0; lambda_start];
        self.report = coloring.report(nd);
        self.particles = particles;
        self.prepared = Some(topology_id);
        Ok(())
    }

    fn prepared_for(&self) -> Option<u64> {
        self.prepared
    }

    fn begin(&mut self, _state: &mut SolveState) {
        self.lambda.iter_mut().for_each(|l| *l = 0.0);
    }

    fn iterate(&mut self, s: &mut SolveState, iteration: usize) {
        assert_eq!(
            s.x.len(),
            self.particles,
            "colored solver prepared for another body"
        );
        self.iterate_by_color(s);
        crate::project_global_kinds(s);
        if iteration + 1 == s.iterations {
            // The step loop's multipliers, in global numbering, after the last iteration.
            for work in &self.work {
                let lam = &self.lambda[work.lambda_start..work.lambda_start + work.batch.len()];
                for (&g, &l) in work.batch.ids.iter().zip(lam) {
                    s.lambda[g as usize] = l;
                }
            }
        }
    }

    fn colors(&self) -> Option<usize> {
        self.prepared.map(|_| self.work.len())
    }

    fn threads(&self) -> usize {
        self.pool.threads()
    }
}
