//! [`EdgeBatch`]: a batch of independent distance constraints, checked once and laid out so
//! that the SIMD kernel loads whole windows of consecutive particles where it can, and gathers
//! particles one by one only where it must.
//!
//! Layout. The batch is cut into blocks of [`LANES`] = 16 constraints (positions
//! `16b..16b+16`), each block into four *quads* of four constraints. A kernel holds the
//! particles of quad `m`, one side, as `Packed4` in 128-bit parts, slot `k` = part `k` (one
//! 512-bit register, two 256-bit ones, or four 128-bit ones); the in-register 4 x 4 transpose
//! per 128-bit part then puts slot `k` of quad `m` in lane `4k + m`, so the constraint of quad
//! `m`, slot `k` is stored at position `16b + 4k + m` and rest lengths, compliances and
//! multipliers are plain vector loads.
//!
//! A quad is one of
//! - a *run* quad: `i = ib + k`, `j = jb + k` (cloth verticals and diagonals sorted by `i`):
//!   one 64-byte load and store per side;
//! - a *pair* quad: `i = pb + 2k`, `j = i + 1` (cloth horizontals of one parity): two 64-byte
//!   loads of the eight particles `pb..pb+8`, split into the sides by two shuffles;
//! - a *stride-2* quad: `i = ib + 2k`, `j = jb + 2k` (cloth rows where a greedy coloring
//!   alternates): four 16-byte loads and stores per side at fixed offsets, no index reads
//!   (a 64-byte window would touch the odd particles, which are other constraints');
//! - a *gather* quad: any four constraints, one 16-byte load and store per particle.
//!
//! Chains of stride 1 are cut first, then stride-2 chains among what is left (a greedy
//! stride-2 chain could cut a long run in two); chain remainders shorter than a quad are
//! gathered. Quads are sorted run, pair, stride-2, gather, so nearly every block holds one kind
//! only and the kernel runs straight-line code for it, chosen once per run of blocks of one
//! kind; a block at a boundary between kinds picks each quad's path. The batch's last block,
//! when partial, is gathered lane by lane.
//! Whatever the layout, a block reads and writes only the particles of its own constraints.

use super::LANES;
use solver_core::constraints::DistanceConstraints;
use solver_core::error::check_index;
use solver_core::error::{Result, WobbleError};

/// Constraints per quad (four `Packed4` per side: 512 bits).
pub(super) const QUAD: usize = 4;

/// Quad kind: run (see the module doc).
pub(super) const RUN: u8 = 0;
/// See [`RUN`].
pub(super) const PAIR: u8 = 1;
/// See [`RUN`].
pub(super) const STRIDE2: u8 = 2;
/// See [`RUN`].
pub(super) const GATHER: u8 = 3;

/// How the kernel loads a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BlockKind {
    /// Four quads of the same kind (`RUN`, `PAIR`, `STRIDE2` or `GATHER`).
    Uniform(u8),
    /// Quads of different kinds, given in order.
    Mixed([u8; QUAD]),
    /// The batch's last block with fewer than `LANES` constraints, at lanes `0..len`.
    Partial,
}

/// How the batch's constraints are loaded, for reports and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchLayout {
    /// Constraints in run quads (`i = ib + k`, `j = jb + k`).
    pub in_runs: usize,
    /// Constraints in pair quads (`i = pb + 2k`, `j = i + 1`).
    pub in_pairs: usize,
    /// Constraints in stride-2 quads (`i = ib + 2k`, `j = jb + 2k`).
    pub in_stride2: usize,
    /// Constraints gathered particle by particle (gather quads and a partial last block).
    pub gathered: usize,
    /// Blocks whose quads are not all of one kind.
    pub mixed_blocks: usize,
}

/// One batch of independent distance constraints, laid out for the SIMD kernel.
///
/// Constraints are stored in an internal order (sorted by particle, grouped into quads and
/// blocks); `ids[k]` is the global id of the constraint at position `k`, whose multiplier is
/// `lambda[k]` in every projection call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EdgeBatch {
    /// Global id of the constraint at each position (where its multiplier lives in the
    /// caller's numbering).
    pub ids: Vec<u32>,
    /// First particle of each constraint (the smaller index).
    pub(super) i: Vec<u32>,
    /// Second particle of each constraint.
    pub(super) j: Vec<u32>,
    /// Rest lengths, padded with zeros to whole blocks.
    pub(super) rest: Vec<f32>,
    /// Compliances α, padded with zeros to whole blocks.
    pub(super) compliance: Vec<f32>,
    /// How the blocks are loaded, as runs of blocks of one kind: `(end block, kind)` in order,
    /// so that the kernel dispatches once per run, not once per block.
    pub(super) segments: Vec<(u32, BlockKind)>,
    /// Largest particle index + 1 (0 when empty): the particle slice must be at least this long.
    pub(super) particles_needed: usize,
    /// Load statistics.
    layout: BatchLayout,
}

/// A constraint on its way into the layout.
#[derive(Clone, Copy, Debug)]
struct Item {
    i: u32,
    j: u32,
    rest: f32,
    compliance: f32,
    id: u32,
}

impl EdgeBatch {
    /// Builds a batch from distance constraints `ids` of `table`; checks they are independent
    /// and in range for `particles` particles.
    pub fn new(table: &DistanceConstraints, ids: &[u32], particles: usize) -> Result<Self> {
        let mut items = Vec::with_capacity(ids.len());
        // (particle, position in `ids`) of every endpoint, to find shared particles by sorting
        // (memory in the batch's size, not the body's).
        let mut ends: Vec<(u32, u32)> = Vec::with_capacity(2 * ids.len());
        for (k, &c) in ids.iter().enumerate() {
            let c = c as usize;
            if c >= table.len() {
                return Err(WobbleError::IndexOutOfRange {
                    what: "batch constraint",
                    index: k,
                    value: c as u64,
                    len: table.len(),
                });
            }
            let [i, j] = table.pairs[c];
            for p in [i, j] {
                check_index("distance constraint", c, p as usize, particles)?;
                ends.push((p, k as u32));
            }
            // The projection is symmetric in i and j (d changes sign exactly), so orienting
            // every constraint i < j changes no result and lets runs line up.
            items.push(Item {
                i: i.min(j),
                j: i.max(j),
                rest: table.rest[c],
                compliance: table.compliance[c],
                id: c as u32,
            });
        }
        check_independent(&mut ends, ids, "batch (constraints not independent)")?;
        Ok(Self::from_items(items))
    }

    /// Sorts the constraints by first particle, cuts runs and pairs into quads, packs blocks.
    fn from_items(mut items: Vec<Item>) -> Self {
        // Particles are distinct across the batch, so `i` alone orders it.
        items.sort_unstable_by_key(|it| it.i);
        let n = items.len();
        let find = |i: u32| items.binary_search_by_key(&i, |it| it.i).ok();
        let mut taken = vec![false; n];
        let mut quads: [Vec<[Item; QUAD]>; 4] = Default::default();
        let mut chain: Vec<usize> = Vec::new();
        // Stride-1 chains first (cheapest loads), then stride-2 chains among what is left: a
        // greedy stride-2 chain could otherwise cut a long run into two halves.
        for stride in [1, 2] {
            for t in 0..n {
                if taken[t] {
                    continue;
                }
                chain.clear();
                chain.push(t);
                let mut c = t;
                while let Some(next) = items[c].i.checked_add(stride).and_then(find) {
                    if taken[next] || items[next].j != items[c].j.wrapping_add(stride) {
                        break;
                    }
                    chain.push(next);
                    c = next;
                }
                let kind = match stride {
                    1 => RUN,
                    _ if items[t].j == items[t].i + 1 => PAIR,
                    _ => STRIDE2,
                };
                let whole = chain.len() / QUAD * QUAD;
                for q in chain[..whole].chunks_exact(QUAD) {
                    quads[kind as usize].push(core::array::from_fn(|k| items[q[k]]));
                    q.iter().for_each(|&c| taken[c] = true);
                }
            }
        }
        let loose: Vec<Item> = (0..n).filter(|&t| !taken[t]).map(|t| items[t]).collect();
        for q in loose.chunks(QUAD) {
            // Only the last gather quad may be short; pad it (the padding is dropped below).
            let mut quad = [q[0]; QUAD];
            quad[..q.len()].copy_from_slice(q);
            quads[GATHER as usize].push(quad);
        }
        let short = loose.len() % QUAD;
        let mut b = EdgeBatch {
            ids: Vec::with_capacity(n),
            i: Vec::with_capacity(n),
            j: Vec::with_capacity(n),
            rest: Vec::with_capacity(n.div_ceil(LANES) * LANES),
            compliance: Vec::with_capacity(n.div_ceil(LANES) * LANES),
            particles_needed: items.iter().map(|it| it.j as usize + 1).max().unwrap_or(0),
            ..Default::default()
        };
        let tagged: Vec<(u8, [Item; QUAD])> = quads
            .iter()
            .enumerate()
            .flat_map(|(kind, qs)| qs.iter().map(move |q| (kind as u8, *q)))
            .collect();
        let full_blocks = n / LANES;
        for block in tagged.chunks(LANES / QUAD).take(full_blocks) {
            b.push_block(block);
        }
        // The rest (fewer than LANES constraints) becomes the partial last block.
        let mut rest: Vec<Item> = tagged[full_blocks * (LANES / QUAD)..]
            .iter()
            .flat_map(|(_, q)| q.iter().copied())
            .collect();
        if short != 0 {
            rest.truncate(rest.len() - (QUAD - short));
        }
        debug_assert_eq!(rest.len(), n - full_blocks * LANES);
        if !rest.is_empty() {
            for it in &rest {
                b.push_item(it);
            }
            b.layout.gathered += rest.len();
            b.push_kind(BlockKind::Partial);
            b.rest.resize(b.blocks() * LANES, 0.0);
            b.compliance.resize(b.blocks() * LANES, 0.0);
        }
        debug_assert!(b.quads_hold());
        b
    }

    fn push_item(&mut self, it: &Item) {
        self.ids.push(it.id);
        self.i.push(it.i);
        self.j.push(it.j);
        self.rest.push(it.rest);
        self.compliance.push(it.compliance);
    }

    /// Appends one full block: quad `m`, slot `k` goes to lane `4k + m`.
    fn push_block(&mut self, quads: &[(u8, [Item; QUAD])]) {
        debug_assert_eq!(quads.len(), LANES / QUAD);
        for k in 0..QUAD {
            for (_, q) in quads {
                self.push_item(&q[k]);
            }
        }
        let kinds: [u8; QUAD] = core::array::from_fn(|m| quads[m].0);
        for kind in kinds {
            match kind {
                RUN => self.layout.in_runs += QUAD,
                PAIR => self.layout.in_pairs += QUAD,
                STRIDE2 => self.layout.in_stride2 += QUAD,
                _ => self.layout.gathered += QUAD,
            }
        }
        let kind = if kinds.iter().all(|&k| k == kinds[0]) {
            BlockKind::Uniform(kinds[0])
        } else {
            self.layout.mixed_blocks += 1;
            BlockKind::Mixed(kinds)
        };
        self.push_kind(kind);
    }

    /// Records the kind of the next block: it extends the last run or starts one.
    fn push_kind(&mut self, kind: BlockKind) {
        let end = self.blocks() as u32 + 1;
        match self.segments.last_mut() {
            Some((last_end, last)) if *last == kind => *last_end = end,
            _ => self.segments.push((end, kind)),
        }
    }

    /// Number of blocks.
    fn blocks(&self) -> usize {
        self.segments.last().map_or(0, |&(end, _)| end as usize)
    }

    /// Each block's kind, in order.
    fn block_kinds(&self) -> impl Iterator<Item = BlockKind> + '_ {
        let mut start = 0;
        self.segments.iter().flat_map(move |&(end, kind)| {
            let run = (start..end as usize).map(move |_| kind);
            start = end as usize;
            run
        })
    }

    /// True when every quad really has the structure its block's kind claims (the kernel's
    /// window loads rely on it), and the runs are non-empty, of differing kinds next to each
    /// other, and cover the padded arrays: for tests and debug builds.
    pub(super) fn quads_hold(&self) -> bool {
        let runs_hold = self
            .segments
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1)
            && self.segments.first().is_none_or(|s| s.0 > 0)
            && self.rest.len() == self.blocks() * LANES;
        runs_hold
            && self.block_kinds().enumerate().all(|(blk, kind)| {
                let kinds = match kind {
                    BlockKind::Uniform(k) => [k; QUAD],
                    BlockKind::Mixed(k) => k,
                    BlockKind::Partial => return true,
                };
                (0..QUAD).all(|m| {
                    let at = |k: usize| blk * LANES + QUAD * k + m;
                    let (i0, j0) = (self.i[at(0)], self.j[at(0)]);
                    (0..QUAD as u32).all(|k| {
                        let (i, j) = (self.i[at(k as usize)], self.j[at(k as usize)]);
                        match kinds[m] {
                            RUN => i == i0 + k && j == j0 + k,
                            PAIR => i == i0 + 2 * k && j == i + 1,
                            STRIDE2 => i == i0 + 2 * k && j == j0 + 2 * k,
                            _ => true,
                        }
                    })
                })
            })
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Particles `[i, j]` (i < j) of the constraint at position `k`.
    pub fn pair(&self, k: usize) -> [u32; 2] {
        [self.i[k], self.j[k]]
    }

    /// Rest length of the constraint at position `k`.
    pub fn rest(&self, k: usize) -> f32 {
        self.rest[k]
    }

    /// The shortest particle slice the projections accept (largest index + 1).
    pub fn particles_needed(&self) -> usize {
        self.particles_needed
    }

    /// How the batch's constraints are loaded.
    pub fn layout(&self) -> BatchLayout {
        self.layout
    }
}

/// Refuses a batch whose constraints share a particle: `ends` holds `(particle, position in
/// ids)` for every particle of every constraint; the error names the first constraint (in
/// `ids` order) that reuses one. Sorts `ends`.
pub(super) fn check_independent(
    ends: &mut [(u32, u32)],
    ids: &[u32],
    kind: &'static str,
) -> Result<()> {
    ends.sort_unstable();
    match ends
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| w[1])
        .min_by_key(|e| e.1)
    {
        None => Ok(()),
        Some((particle, k)) => Err(WobbleError::RepeatedParticle {
            kind,
            index: ids[k as usize] as usize,
            particle,
        }),
    }
}
