//! Graph-colored Gauss-Seidel: colors in a fixed sequence, SIMD lanes and threads inside each.
//!
//! Theory: the XPBD update `Δλ = (-C - α̃λ) / (Σ w |∇C|² + α̃)`, `Δx_k = k w_k ∇_k C Δλ`
//! (Macklin, Müller, Chentanez 2016) projected color after color. Constraints of one color share
//! no particle (see [`crate::coloring`]), so projecting them one after another or all at once
//! gives the same result: Gauss-Seidel between colors, parallel and SIMD inside a color.
//! The distance constraints of a color form one `EdgeBatch` for solver-core's SIMD kernels
//! (`LANES` constraints per block, the kernel of `SolverOptions::kernel`, resolved once at
//! `Colored::new`); its bending constraints (dihedral, isometric) form one `BendBatch` per
//! table for the same kernel, and other kinds go through the scalar `project_generic`.
//! Tethers leave the coloring: the tethers of a table are cut into `TetherBatch`es (the `r`-th
//! tether of every particle; their shared anchors are pinned, so only read) projected on one
//! thread after the colors of every iteration. A coloring keeps the tethers of one anchor in
//! different colors, so through the colors they cost a color each.
//!
//! # Schedules
//! *Whole-body sweep*: each color runs whole; a color larger than `parallel_threshold` is cut
//! into blocks of `chunk` constraints (a multiple of `LANES`, independent of the thread count)
//! run on the solver's private rayon pool. Every color streams every particle it touches from
//! wherever it lives, so once the particles outgrow L2 (the 256 x 256 cloth's are 1 MB) an
//! iteration reads them from L3 or memory once per color.
//!
//! *Tiled sweep* (bodies of at least four tiles): particles are cut into tiles of
//! `tile_particles` = P consecutive indices, and a distance constraint whose particles both lie
//! in tile `t` (`[tP, tP + P)`) belongs to tile `t`. Tiles share no particle, so an iteration
//! runs every tile (in parallel), each tile running its own colors in sequence while its
//! particles stay in L2. Then the *seam tiles*, the same cut shifted by half a tile
//! (`[sP - P/2, sP + P/2)`), take the constraints that cross a tile boundary by less than half a
//! tile on each side, again in parallel, each as soon as the two tiles it overlaps are done;
//! what is left (long edges, other kinds) goes through a whole-body sweep. When nothing is left
//! and the step loop asks for all iterations at once (`Solver::iterate_all`), the tiles and seam
//! tiles of every iteration run as one task graph without barriers (the private `wavefront` module).
//! Every constraint is still projected once per iteration, in an order that
//! is a Gauss-Seidel order, only not the whole-body one: a tiled body's state differs from the
//! whole-body sweep's in rounding, and agrees bit for bit across thread counts. Each particle is
//! read and written about once per iteration instead of once per color, and the threads get
//! one hand-off per iteration instead of one per color. Seam tiles keep the constraints across
//! tile boundaries in the parallel part (as a serial sweep they cost a second thread its
//! gain). `docs/performance-notes.md` gives the commands that measure these gains.
//!
//! The multipliers live in batch order; each batch's are zeroed just before the first iteration
//! of a substep projects it (while the lines are in cache, not in a pass of their own) and
//! written to `SolveState::lambda` in global numbering as the last iteration finishes it (not in
//! a separate pass over them all), on the substeps whose multipliers the step loop reads
//! (`SolveState::keep_multipliers`: a step's last).
//!
//! In both, the kernel's result per constraint does not depend on how a batch is cut at
//! multiples of `LANES`, and tiles touch disjoint particles, so 1, 2 and N threads agree bit
//! for bit. Whether a body is tiled depends only on the body and the
//! options (never on the thread count): at least four tiles, and at least half of the distance
//! constraints local to a tile (a shuffled numbering has almost none, and gets the whole-body
//! sweep).
//!
//! The batches copy rest lengths and compliances at prepare: after changing them on a body,
//! call `Body::topology_changed` so the solver rebuilds.

use crate::coloring::{Coloring, ColoringReport};
use crate::incidence::Incidence;
use crate::parallel::{Pool, SharedMut};
use crate::wavefront::Wavefront;
use crate::{ColoredOptions, ColoringMethod, SolverOptions};
use solver_core::constraints::{project_generic, DihedralBending, IsometricBending, Tethers};
pub mod simd;

use simd::{project_batch_range, BendBatch, EdgeBatch, Kernel, TetherBatch};
use solver_core::{Constraints, Packed4, Preparation, SolveState, Solver, WobbleError};
use std::ops::Range;

/// What the kernel needs besides the data: which kernel, α̃ scale, stiffness, whether this
/// is a substep's first iteration (zero the multipliers first), and in its last iteration where
/// the multipliers go in global numbering (`SolveState::lambda`).
#[derive(Clone, Copy, Debug)]
struct KernelArgs {
    kernel: Kernel,
    inv_dt2: f32,
    k: f32,
    first: bool,
    out: Option<SharedMut<f32>>,
}

/// Default particles per tile: 16384 particles are 256 KB, an eighth of a 2 MB L2, leaving room
/// for the streamed constraint data.
pub const DEFAULT_TILE_PARTICLES: usize = 16384;

/// One color's work: a SIMD batch of its distance constraints and its other constraints.
#[derive(Clone, Debug, Default)]
struct ColorWork {
    batch: EdgeBatch,
    /// Where this batch's multipliers start in the solver's batch-order buffer.
    lambda_start: usize,
    /// Other kinds: (index in `Constraints::extra`, local id, global id).
    generic: Vec<[u32; 3]>,
    /// The color's bending constraints (dihedral, isometric), one batch per table.
    bends: Vec<KindWork<BendBatch>>,
}

/// A batch of another kind's constraints on the kernels (bending, tethers).
#[derive(Clone, Debug, Default)]
struct KindWork<B> {
    batch: B,
    /// Where its multipliers start in `Colored::kind_lambda`.
    lambda_start: usize,
    /// Global id of its table's first constraint (the batch's ids are the table's).
    offset: u32,
}

/// What [`Colored::project_kind`] needs of a batch.
trait KindBatch {
    /// The table's id of the constraint at each position.
    fn ids(&self) -> &[u32];
}

impl KindBatch for BendBatch {
    fn ids(&self) -> &[u32] {
        &self.ids
    }
}

impl KindBatch for TetherBatch {
    fn ids(&self) -> &[u32] {
        &self.ids
    }
}

/// One set of disjoint tiles (the tiles, or the seam tiles), those holding constraints.
#[derive(Clone, Debug, Default)]
struct TileSet {
    /// Each tile's batches as a range of `Colored::work` (colors in sequence).
    tiles: Vec<Range<usize>>,
    /// Each tile's place in its cut: tile `t` covers `[tP, tP + P)`, seam tile `s`
    /// `[sP - P/2, sP + P/2)`.
    place: Vec<usize>,
    /// Distance constraints in these tiles.
    len: usize,
}

/// How a prepared body is swept: tile count and constraints inside tiles (0, 0 when the body
/// is swept whole).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileReport {
    /// Tiles holding at least one constraint.
    pub tiles: usize,
    /// Particles per tile.
    pub tile_particles: usize,
    /// Distance constraints projected inside tiles.
    pub tiled_constraints: usize,
    /// Distance constraints projected inside seam tiles (the tiles shifted by half a tile); the
    /// rest go through the whole-body sweep.
    pub seam_constraints: usize,
}

/// The graph-colored Gauss-Seidel solver (`colored`).
#[derive(Debug)]
pub struct Colored {
    pool: Pool,
    opts: SolverOptions,
    colored: ColoredOptions,
    /// The kernel `opts.kernel` resolves to on this CPU (never `Auto`).
    kernel: Kernel,
    prepared: Preparation,
    particles: usize,
    /// The tiles' batches (tile after tile), the seam tiles' batches, then the whole-body
    /// sweep's colors from `sweep`.
    work: Vec<ColorWork>,
    /// First entry of `work` swept over the whole body.
    sweep: usize,
    tiles: TileSet,
    seams: TileSet,
    /// The tiles and seam tiles as a task graph (see [`crate::wavefront`]): tasks `0..tiles`
    /// are the tiles, then the seam tiles; a seam tile waits for the two tiles it overlaps, so
    /// no barrier separates tiles and seams. `None` when the body is swept whole.
    wave: Option<Wavefront>,
    /// Whether the graph is the whole iteration (nothing left to sweep, no global kind), so
    /// that all iterations can run as one graph.
    graph_is_iteration: bool,
    /// Multipliers of the distance constraints in batch order, `work` after `work`.
    lambda: Vec<f32>,
    /// Tether batches, projected one after another after the colors of every iteration (a
    /// table whose tethers cannot be batched stays in the colors, through `generic`).
    tethers: Vec<KindWork<TetherBatch>>,
    /// Multipliers of the bend and tether batches in batch order.
    kind_lambda: Vec<f32>,
    /// Colors of the last successful prepare.
    colors: Option<usize>,
    /// Distance constraints of the prepared body.
    distance: usize,
    /// Whether any part of an iteration is large enough to run on several threads.
    parallel_work: bool,
    /// Global ids of the constraints of the other tables a solver sees
    /// (`Constraints::solver_len`; the step-loop tables after them change size without a
    /// prepare, and the step loop zeroes their multipliers): the entries of
    /// `SolveState::lambda` that `begin` zeroes.
    other_ids: Range<usize>,
    report: ColoringReport,
    tile_report: TileReport,
}

impl Colored {
    /// A colored solver on `opts`' threads, coloring and tiling as `colored` says.
    pub fn new(opts: &SolverOptions, colored: ColoredOptions) -> Result<Self, WobbleError> {
        opts.validate()?;
        colored.validate()?;
        Ok(Colored {
            pool: opts.make_pool()?,
            opts: opts.clone(),
            colored,
            kernel: opts.kernel.resolve()?,
            prepared: Preparation::default(),
            particles: 0,
            work: Vec::new(),
            sweep: 0,
            tiles: TileSet::default(),
            seams: TileSet::default(),
            wave: None,
            graph_is_iteration: false,
            lambda: Vec::new(),
            tethers: Vec::new(),
            kind_lambda: Vec::new(),
            colors: None,
            distance: 0,
            parallel_work: false,
            other_ids: 0..0,
            report: ColoringReport::default(),
            tile_report: TileReport::default(),
        })
    }

    /// Color count, balance and SIMD split of the last prepared coloring.
    pub fn coloring_report(&self) -> &ColoringReport {
        &self.report
    }

    /// Whether the last prepared body is tiled, and how.
    pub fn tile_report(&self) -> TileReport {
        self.tile_report
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

    /// Runs tile `e` of `set`: its batches (colors) in sequence.
    ///
    /// # Safety
    /// `x` holds `self.particles` particles and `lambda` is the start of `self.lambda`; no
    /// other thread touches this tile's particles or multipliers during the call.
    #[inline]
    unsafe fn run_tile(
        &self,
        set: &TileSet,
        e: usize,
        x: SharedMut<Packed4>,
        lambda: SharedMut<f32>,
        c: KernelArgs,
    ) {
        for w in &self.work[set.tiles[e].clone()] {
            if c.first {
                Colored::zero_multipliers(lambda, w);
            }
            // Every batch index is below `self.particles` (checked by `EdgeBatch::new`); the
            // kernel was resolved for this CPU by `Colored::new`.
            project_batch_range(
                c.kernel,
                x.get(),
                &w.batch,
                0..w.batch.len(),
                lambda.get().add(w.lambda_start),
                c.inv_dt2,
                c.k,
            );
            if let Some(out) = c.out {
                // While the batch's multipliers are still in cache.
                Colored::write_back(w, lambda, out);
            }
        }
    }

    /// Copies batch `w`'s multipliers to `out` (`SolveState::lambda`, global numbering).
    ///
    /// # Safety
    /// `lambda` is the start of `self.lambda`; `out` holds every distance constraint's
    /// multiplier (batch ids are distance constraint ids, checked by `EdgeBatch::new`); no other
    /// thread touches `w`'s range or its ids' entries of `out` (each id is in one batch, once).
    #[inline]
    unsafe fn write_back(w: &ColorWork, lambda: SharedMut<f32>, out: SharedMut<f32>) {
        let lam = std::slice::from_raw_parts(lambda.get().add(w.lambda_start), w.batch.len());
        for (&g, &l) in w.batch.ids.iter().zip(lam) {
            *out.get().add(g as usize) = l;
        }
    }

    /// Runs iterations `from..from + count` of the tile graph (tiles and seam tiles, each
    /// running its colors in sequence; a seam tile as soon as the tiles it overlaps are done):
    /// on the pool's threads when the tiles are large enough to split. Nothing when the body is
    /// swept whole.
    fn run_graph(&mut self, s: &mut SolveState, from: usize, count: usize) {
        let Some(mut wave) = self.wave.take() else {
            return;
        };
        assert_eq!(
            s.x.len(),
            self.particles,
            "colored solver prepared for another body"
        );
        assert!(
            s.lambda.len() >= self.distance,
            "one multiplier per constraint"
        );
        let parallel = self.tiles.len + self.seams.len >= self.opts.parallel_threshold;
        let (x, out) = (SharedMut::new(s.x), SharedMut::new(s.lambda));
        let lambda = SharedMut::new(&mut self.lambda);
        let (kernel, inv_dt2, k, last) = (self.kernel, s.inv_dt2, s.stiffness, s.iterations);
        let keep = s.keep_multipliers;
        let this = &*self;
        let nt = this.tiles.tiles.len();
        wave.run(&this.pool, parallel, count, &|it, task| {
            let c = KernelArgs {
                kernel,
                inv_dt2,
                k,
                first: from + it == 0,
                out: (from + it + 1 == last && keep).then_some(out),
            };
            // SAFETY: `x` has `self.particles` particles and `s.lambda` a multiplier per
            // distance constraint (asserted above). The graph runs at once only tasks that
            // touch disjoint particles and multipliers (tiles are disjoint, seam tiles are,
            // and a seam tile waits for the tiles it overlaps), each once per iteration in the
            // order of the iteration-by-iteration schedule (the counters' acquire-release
            // orders a task's writes before its successors' reads). `s.x`, `s.lambda` and
            // `self.lambda` are not otherwise accessed while it runs.
            unsafe {
                match task.checked_sub(nt) {
                    None => this.run_tile(&this.tiles, task, x, lambda, c),
                    Some(e) => this.run_tile(&this.seams, e, x, lambda, c),
                }
            }
        });
        self.wave = Some(wave);
    }

    /// The whole-body part of one iteration: color after color, large colors split across the
    /// pool's threads.
    fn iterate_by_color(&mut self, s: &mut SolveState, first: bool, last: bool) {
        let (inv_dt2, k, kernel) = (s.inv_dt2, s.stiffness, self.kernel);
        let chunk = self.opts.chunk;
        let kind_lambda = &mut self.kind_lambda;
        for work in &self.work[self.sweep..] {
            // Fresh pointers per color: `s.x` is used directly by the generic path below.
            let x = SharedMut::new(s.x);
            let lambda = SharedMut::new(&mut self.lambda);
            let b = &work.batch;
            let blocks = b.len().div_ceil(chunk);
            let parallel = b.len() >= self.opts.parallel_threshold;
            let start = work.lambda_start;
            if first {
                // SAFETY: the batch's multiplier range; no thread runs yet.
                unsafe { Colored::zero_multipliers(lambda, work) };
            }
            self.pool.for_each_block(blocks, parallel, |block| {
                let range = block * chunk..((block + 1) * chunk).min(b.len());
                // SAFETY: `x` has `self.particles` particles (checked by `iterate`) and every
                // batch index is below that (checked by `EdgeBatch::new` at prepare). The
                // constraints of one color share no particle (coloring checked at prepare) and
                // blocks are disjoint ranges of the batch and of its multipliers, so no two
                // threads touch the same particle or multiplier. `s.x` and `self.lambda` are
                // not otherwise accessed while the blocks run. The kernel was resolved for
                // this CPU by `Colored::new`.
                unsafe {
                    project_batch_range(
                        kernel,
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
            for w in &work.bends {
                Colored::project_kind(s, w, kind_lambda, first, last, |x, b, r, l| {
                    // SAFETY: see `project_kind`; the kernel was resolved by `Colored::new`.
                    unsafe { project_batch_range(kernel, x, b, r, l, inv_dt2, k) }
                });
            }
        }
        for w in &self.tethers {
            Colored::project_kind(s, w, kind_lambda, first, last, |x, b, r, l| {
                // SAFETY: as above; tether batches run on this thread only (their anchors are
                // shared).
                unsafe { project_batch_range(kernel, x, b, r, l, inv_dt2, k) }
            });
        }
    }

    /// Projects kind batch `w` with `project(x, batch, range, multipliers)` on this thread,
    /// zeroing its multipliers first in a substep's first iteration and writing them to
    /// `s.lambda` (global numbering) after its last.
    ///
    /// `project` gets `s.x` (`self.particles` particles, checked by `iterate`; the batch's
    /// indices were checked against that count at prepare) and the batch's multiplier range of
    /// `kind_lambda`, both held exclusively.
    fn project_kind<B: KindBatch>(
        s: &mut SolveState,
        w: &KindWork<B>,
        kind_lambda: &mut [f32],
        first: bool,
        last: bool,
        project: impl Fn(*mut Packed4, &B, Range<usize>, *mut f32),
    ) {
        let len = w.batch.ids().len();
        let lam = &mut kind_lambda[w.lambda_start..w.lambda_start + len];
        if first {
            lam.fill(0.0);
        }
        project(s.x.as_mut_ptr(), &w.batch, 0..len, lam.as_mut_ptr());
        if last {
            for (&c, &l) in w.batch.ids().iter().zip(lam.iter()) {
                s.lambda[w.offset as usize + c as usize] = l;
            }
        }
    }

    /// Takes the tethers out of the colors: each table whose tethers batch (see
    /// [`TetherBatch::split`]) gets its batches; the others stay where they are.
    fn take_tethers(
        &mut self,
        constraints: &Constraints,
        particles: usize,
        offsets: &[usize],
        colors: &mut [Vec<u32>],
        kind_len: &mut usize,
    ) -> Result<(), WobbleError> {
        let mut taken = Vec::new();
        for (t, kind) in constraints.extra.iter().enumerate() {
            let Some(table) = kind.as_any().downcast_ref::<Tethers>() else {
                continue;
            };
            let Some(batches) = TetherBatch::split(table, particles)? else {
                continue;
            };
            for batch in batches {
                let len = batch.len();
                self.tethers.push(KindWork {
                    batch,
                    lambda_start: *kind_len,
                    offset: offsets[t + 1] as u32,
                });
                *kind_len += len;
            }
            taken.push(offsets[t + 1] as u32..offsets[t + 2] as u32);
        }
        if !taken.is_empty() {
            for ids in colors.iter_mut() {
                ids.retain(|g| !taken.iter().any(|r| r.contains(g)));
            }
        }
        Ok(())
    }

    /// Splits a color's other constraints into bend batches (one per dihedral or isometric
    /// table) and what stays generic.
    #[allow(clippy::type_complexity)]
    fn bend_batches(
        constraints: &Constraints,
        particles: usize,
        offsets: &[usize],
        generic: Vec<[u32; 3]>,
        kind_len: &mut usize,
    ) -> Result<(Vec<KindWork<BendBatch>>, Vec<[u32; 3]>), WobbleError> {
        let mut per_table: Vec<Vec<u32>> = vec![Vec::new(); constraints.extra.len()];
        let mut rest = Vec::with_capacity(generic.len());
        for e in generic {
            let kind = constraints.extra[e[0] as usize].as_any();
            if kind.is::<DihedralBending>() || kind.is::<IsometricBending>() {
                per_table[e[0] as usize].push(e[1]);
            } else {
                rest.push(e);
            }
        }
        let mut bends = Vec::new();
        for (t, ids) in per_table
            .iter()
            .enumerate()
            .filter(|(_, ids)| !ids.is_empty())
        {
            let kind = constraints.extra[t].as_any();
            let batch = match kind.downcast_ref::<DihedralBending>() {
                Some(table) => BendBatch::dihedral(table, ids, particles)?,
                None => {
                    let table = kind
                        .downcast_ref::<IsometricBending>()
                        .expect("only bending tables were kept");
                    BendBatch::isometric(table, ids, particles)?
                }
            };
            let len = batch.len();
            bends.push(KindWork {
                batch,
                lambda_start: *kind_len,
                offset: offsets[t + 1] as u32,
            });
            *kind_len += len;
        }
        Ok((bends, rest))
    }

    /// Zeroes the multipliers of batch `w` (before the first iteration of a substep).
    ///
    /// # Safety
    /// `lambda` is the start of `self.lambda`, and no other thread touches `w`'s range.
    #[inline]
    unsafe fn zero_multipliers(lambda: SharedMut<f32>, w: &ColorWork) {
        std::slice::from_raw_parts_mut(lambda.get().add(w.lambda_start), w.batch.len()).fill(0.0);
    }

    /// The tile of distance constraint `[i, j]`, when both its particles lie in one; tiles of
    /// `tile` particles starting at `-shift`.
    fn tile_of(pair: [u32; 2], tile: usize, shift: usize) -> Option<usize> {
        let t = (pair[0] as usize + shift) / tile;
        ((pair[1] as usize + shift) / tile == t).then_some(t)
    }

    /// Splits each color's distance constraints into tiles and then seam tiles when the body is
    /// worth tiling: `per_tile[t][k]` holds tile `t`'s constraints of color `k`, `per_seam[s][k]`
    /// those of seam tile `s`; the ids placed are removed from `colors`. `None` (and `colors`
    /// untouched) when the body is swept whole.
    #[allow(clippy::type_complexity)]
    fn split_into_tiles(
        &self,
        constraints: &Constraints,
        particles: usize,
        colors: &mut [Vec<u32>],
    ) -> Option<(Vec<Vec<Vec<u32>>>, Vec<Vec<Vec<u32>>>)> {
        let tile = self.colored.tile_particles;
        let nd = constraints.distance.len();
        if tile == 0 || particles < 4 * tile {
            return None;
        }
        let pairs = &constraints.distance.pairs;
        let local = (0..nd)
            .filter(|&c| Colored::tile_of(pairs[c], tile, 0).is_some())
            .count();
        if 2 * local < nd {
            return None;
        }
        // Seam tile s covers [sP - P/2, sP + P/2): index s = (i + P/2) / P, 0..=tiles.
        let mut split = |shift: usize| {
            let sets = (particles + shift).div_ceil(tile);
            let mut per_tile = vec![vec![Vec::new(); colors.len()]; sets];
            for (k, ids) in colors.iter_mut().enumerate() {
                ids.retain(|&g| {
                    let g = g as usize;
                    match (g < nd).then(|| Colored::tile_of(pairs[g], tile, shift)) {
                        Some(Some(t)) => {
                            per_tile[t][k].push(g as u32);
                            false
                        }
                        _ => true,
                    }
                });
            }
            per_tile
        };
        let per_tile = split(0);
        let per_seam = split(tile / 2);
        Some((per_tile, per_seam))
    }

    /// The task graph of the tiles (tasks `0..nt`) and seam tiles (`nt..`): seam tile `s`
    /// overlaps tiles `s - 1` and `s`, and follows them within an iteration.
    fn wavefront(&self) -> Wavefront {
        let nt = self.tiles.tiles.len();
        let tasks = nt + self.seams.tiles.len();
        let mut before = vec![Vec::new(); tasks];
        let mut overlaps = vec![Vec::new(); tasks];
        for (e, &s) in self.seams.place.iter().enumerate() {
            let e = nt + e;
            // Tiles s - 1 and s, when they hold constraints (`place` is ascending).
            for t in [s.checked_sub(1), Some(s)].into_iter().flatten() {
                if let Ok(t) = self.tiles.place.binary_search(&t) {
                    before[e].push(t as u32);
                    overlaps[e].push(t as u32);
                    overlaps[t].push(e as u32);
                }
            }
        }
        Wavefront::new(tasks, &before, &overlaps)
    }

    /// Appends the batches of `per_tile` (tile after tile, colors in sequence) to `work` and
    /// returns them as a tile set.
    fn push_tiles(
        &mut self,
        constraints: &Constraints,
        particles: usize,
        per_tile: &[Vec<Vec<u32>>],
        lambda_len: &mut usize,
    ) -> Result<TileSet, WobbleError> {
        let mut set = TileSet::default();
        for (place, tile_colors) in per_tile.iter().enumerate() {
            let first = self.work.len();
            for ids in tile_colors.iter().filter(|ids| !ids.is_empty()) {
                self.push_work(constraints, particles, ids, Vec::new(), lambda_len)?;
            }
            let len: usize = tile_colors.iter().map(Vec::len).sum();
            if len > 0 {
                set.tiles.push(first..self.work.len());
                set.place.push(place);
                set.len += len;
            }
        }
        Ok(set)
    }

    /// Appends one batch of distance constraints `ids` (and other kinds' `generic`) to `work`.
    fn push_work(
        &mut self,
        constraints: &Constraints,
        particles: usize,
        ids: &[u32],
        generic: Vec<[u32; 3]>,
        lambda_len: &mut usize,
    ) -> Result<(), WobbleError> {
        let batch = EdgeBatch::new(&constraints.distance, ids, particles)?;
        let len = batch.len();
        self.work.push(ColorWork {
            batch,
            lambda_start: *lambda_len,
            generic,
            bends: Vec::new(),
        });
        *lambda_len += len;
        Ok(())
    }
}

impl Solver for Colored {
    fn name(&self) -> &'static str {
        "colored"
    }

    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<(), WobbleError> {
        self.colors = None;
        let nd = constraints.distance.len();
        let coloring = {
            let inc = Incidence::of_solver_tables_without_entries(constraints, particles)?;
            let coloring = match self.colored.coloring {
                ColoringMethod::Greedy => Coloring::greedy(&inc),
                ColoringMethod::Randomized => {
                    Coloring::randomized(&inc, self.colored.seed, self.colored.palette_shrink)?
                }
            };
            coloring.check(&inc)?;
            coloring
        };
        let offsets = constraints.offsets();
        // Global kinds (empty incidence rows) are projected after the sweep, not in a color.
        let global = |g: u32| {
            let g = g as usize;
            g >= nd && {
                let t = offsets.partition_point(|&o| o <= g) - 2;
                constraints.extra[t].projected_by_step_loop()
            }
        };
        let mut colors: Vec<Vec<u32>> = (0..coloring.colors())
            .map(|k| {
                coloring
                    .color(k)
                    .iter()
                    .copied()
                    .filter(|&g| !global(g))
                    .collect()
            })
            .collect();
        self.work.clear();
        self.tiles = TileSet::default();
        self.seams = TileSet::default();
        self.wave = None;
        self.graph_is_iteration = false;
        self.tile_report = TileReport::default();
        let mut lambda_len = 0;
        let mut kind_len = 0;
        self.tethers.clear();
        self.take_tethers(constraints, particles, &offsets, &mut colors, &mut kind_len)?;
        if let Some((per_tile, per_seam)) =
            self.split_into_tiles(constraints, particles, &mut colors)
        {
            self.tiles = self.push_tiles(constraints, particles, &per_tile, &mut lambda_len)?;
            self.seams = self.push_tiles(constraints, particles, &per_seam, &mut lambda_len)?;
            self.wave = Some(self.wavefront());
            self.tile_report = TileReport {
                tiles: self.tiles.tiles.len(),
                tile_particles: self.colored.tile_particles,
                tiled_constraints: self.tiles.len,
                seam_constraints: self.seams.len,
            };
        }
        self.sweep = self.work.len();
        for ids in &colors {
            // Coloring lists ids ascending, so the distance constraints come first.
            let split = ids.partition_point(|&g| (g as usize) < nd);
            let generic = ids[split..]
                .iter()
                .map(|&g| {
                    // offsets[0] = 0 and offsets[1] = nd: extra table t starts at offsets[t + 1].
                    let t = offsets.partition_point(|&o| o <= g as usize) - 2;
                    [t as u32, g - offsets[t + 1] as u32, g]
                })
                .collect();
            if ids.is_empty() {
                continue;
            }
            let (bends, generic) =
                Colored::bend_batches(constraints, particles, &offsets, generic, &mut kind_len)?;
            self.push_work(
                constraints,
                particles,
                &ids[..split],
                generic,
                &mut lambda_len,
            )?;
            self.work.last_mut().expect("just pushed").bends = bends;
        }
        self.kind_lambda = vec![0.0; kind_len];
        self.lambda = vec![0.0; lambda_len];
        self.colors = Some(coloring.colors());
        self.distance = nd;
        let threshold = self.opts.parallel_threshold;
        self.parallel_work = self.tiles.len + self.seams.len >= threshold
            || self.work[self.sweep..]
                .iter()
                .any(|w| w.batch.len() >= threshold);
        self.other_ids = nd..constraints.solver_len();
        let swept = self.work[self.sweep..]
            .iter()
            .any(|w| !w.batch.is_empty() || !w.generic.is_empty() || !w.bends.is_empty())
            || !self.tethers.is_empty();
        self.graph_is_iteration = !swept && !constraints.has_step_loop_kinds();
        self.report = coloring.report(nd);
        self.particles = particles;
        Ok(())
    }

    fn preparation(&mut self) -> Option<&mut Preparation> {
        Some(&mut self.prepared)
    }

    fn begin(&mut self, s: &mut SolveState) {
        // The distance multipliers are zeroed batch by batch just before the first iteration
        // projects them (while their lines are in cache), and written to `s.lambda` after the
        // last; only the other kinds' entries of `s.lambda` are read during the solve.
        s.lambda[self.other_ids.clone()].fill(0.0);
    }

    fn iterate(&mut self, s: &mut SolveState, iteration: usize) {
        assert_eq!(
            s.x.len(),
            self.particles,
            "colored solver prepared for another body"
        );
        // Multipliers go out only where the step loop reads them (see `keep_multipliers`).
        let write_back = iteration + 1 == s.iterations && s.keep_multipliers;
        if write_back {
            // After the last iteration the step loop's multipliers are in `s.lambda` in global
            // numbering: each batch writes its own there as it finishes.
            assert!(
                s.lambda.len() >= self.distance,
                "one multiplier per constraint"
            );
        }
        self.run_graph(s, iteration, 1);
        self.iterate_by_color(s, iteration == 0, write_back);
        if write_back {
            let out = SharedMut::new(s.lambda);
            let (work, lambda) = (&self.work[self.sweep..], SharedMut::new(&mut self.lambda));
            self.pool
                .for_each_block(work.len(), self.parallel_work, |k| {
                    // SAFETY: `s.lambda` holds every distance multiplier (asserted above); each
                    // block is one batch, with its own multipliers and ids; `s.lambda` and
                    // `self.lambda` are not otherwise accessed meanwhile.
                    unsafe { Colored::write_back(&work[k], lambda, out) }
                });
        }
    }

    fn iterate_all(&mut self, s: &mut SolveState) {
        if self.wave.is_some() && self.graph_is_iteration {
            self.run_graph(s, 0, s.iterations);
        } else {
            (0..s.iterations).for_each(|it| self.iterate(s, it));
        }
    }

    fn executor(&self) -> Option<std::sync::Arc<dyn solver_core::Executor>> {
        // A body too small to split gains nothing from the hand-off to the pool.
        self.parallel_work.then(|| self.pool.executor()).flatten()
    }

    fn report(&self) -> solver_core::SolverReport {
        solver_core::SolverReport {
            threads: self.pool.threads(),
            colors: self.colors,
            kernel: Some(self.kernel.name()),
        }
    }
}
