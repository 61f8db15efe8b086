//! Triangle contacts within a body and between the bodies of a [`crate::world::World`]:
//! vertex-triangle (VT) and edge-edge (EE) pairs kept a thickness apart, with friction, and a
//! per-vertex bound on each substep's displacement under which no two triangles that share no
//! vertex can pass through each other (Offset Geometric Contact, Chen et al. 2025).
//! [`crate::world::World::set_triangle_contacts`] turns it on for every body of the world that
//! has triangles (cloth, open surfaces, the surfaces of volumetric bodies).
//!
//! Each substep of a world with triangle contacts:
//!
//! 1. `TriangleContacts::begin_substep`, before any body moves: every participating body's
//!    vertices at the substep's start, in the frame of the first body, in one array; a dense
//!    grid of cells over them, each triangle (its box grown by the search radius `R`)
//!    listed in every cell its box meets; each vertex tested against the triangles of its cell
//!    and each edge against the edges of the triangles of the cells its box meets, with the
//!    exact distance (closest points) for the pairs whose grown boxes meet. A VT or EE pair
//!    closer than `R` (sharing no vertex) becomes a contact of every body it has a vertex of;
//!    its distance lowers the displacement bound of the vertices around it (below).
//! 2. in each body's step (`TriangleContacts::fill_table`): the body's contacts go into its
//!    [`TriangleContactTable`], which the step loop projects after every solver iteration
//!    (like [`crate::world::WorldContacts`]), each sweep followed by the truncation of every
//!    particle's displacement to its bound; before the step each velocity is clamped to
//!    `b_v / h`. A pair within the body is solved with all four particles; a pair with a body
//!    solved before this one in the substep (the world's levels, [`crate::world`]) takes that
//!    body's points as constants at their solved positions, rigidly; a pair with a body not
//!    yet solved is left to that body, which meets this one solved.
//! 3. after the body's step (`TriangleContacts::finish_body`): friction on its contacts, and
//!    every vertex's displacement over the substep truncated to its bound once more (the
//!    velocity recomputed from the truncated displacement).
//!
//! # Theory
//!
//! **Contact.** A pair is four points with coefficients `c_k` summing to zero on each side,
//! `X = Σ c_k x_k` the difference of the two closest points: VT `c = (1, -β₀, -β₁, -β₂)` with
//! `β` the barycentric coordinates of the point of the triangle nearest the vertex; EE
//! `c = (1 - s, s, -(1 - t), -t)` with `s`, `t` the closest points' parameters on the two
//! edges. With `n = X₀ / |X₀|` at the substep's start (fixed over the substep: the pair is
//! linearised there, as the plane contacts are), the contact is the inequality
//! `C = r' - n · X <= 0`, `∇_k C = -c_k n`, solved by the XPBD update of
//! [`crate::constraints::project_generic`]; `r' = min(r, d₀ + v_max h)` with `r` the
//! thickness, `d₀ = |X₀|` and `v_max` the world's depenetration speed, so a pair that starts
//! the substep closer than `r` is pushed apart at a bounded speed, not launched. `r` is a
//! length of its own, independent of the edge length: VT and EE pairs together give the
//! distance between two triangles exactly (the closest points of two disjoint triangles are a
//! vertex and a face or two edges), so a sheet 1 mm from another is held at 1 mm whatever the
//! size of its triangles. Friction as the world's contacts have it (one `μ`, static below
//! `μ d`, kinetic above; Macklin et al. 2014, §6.1), on the tangential part of the relative
//! motion `Σ c_k Δx_k` of the two closest points, removed by moving each particle by
//! `c_k w_k / Σ c_j² w_j` of it (the least-norm correction of that relative motion).
//!
//! **No crossing.** Let `D(T₁, T₂)` be the distance between two triangles that share no
//! vertex, at the substep's start. If every vertex of both moves by at most `γ D` with
//! `γ < 1/2` (along any path inside the ball of that radius around its start, the straight
//! line included), every point of each triangle, a convex combination of its vertices, moves
//! by at most `γ D`, so the distance between any two of their points stays above
//! `(1 - 2γ) D > 0`: the two triangles cannot meet in the substep, whatever the solver did.
//! The minimum `D(T₁, T₂)` is reached by a VT pair (a vertex of one, the other) or an EE pair
//! (an edge of each). So with `d_v` the distance of vertex `v` to the nearest triangle not
//! incident to it, `d_t` that of triangle `t` to the nearest vertex not of it, and `d_e`
//! that of edge `e` to the nearest edge sharing no vertex with it (all capped at `R`), and
//! `D_t = min(d_t, min_{v ∈ t} d_v, min_{e ⊂ t} d_e)`, the bound
//! `b_v = γ min_{t ∋ v} D_t` satisfies `b_v <= γ D(T₁, T₂)` for every pair of triangles with
//! `v` a vertex of either: the minimizing primitive pair of `(T₁, T₂)` enters `D_{T₁}` and
//! `D_{T₂}` both. A pair of triangles not found within `R` is at least `R` apart, and the
//! bound never exceeds `γ R`, so it cannot cross either. The truncation,
//! `x ← x₀ + (x - x₀) min(1, b_v / |x - x₀|)`, runs on the solved positions of each body
//! after its step, and all the bounds are computed before any body of the world moves, so the
//! guarantee holds between bodies stepped one after the other too. `γ` = 0.45 by default.
//!
//! **Making the truncation rare.** The truncation pulls a particle back along its own path,
//! so it keeps the direction of whatever the solve did: a cloth sliding down a slope whose
//! slide is cut keeps the slope's normal part of its fall and closes the gap beneath it, a
//! little every substep, until the bounds, which shrink with the gap, freeze the layers
//! together (observed on `layers` before these measures). Three measures keep it the
//! exception: the velocity clamp to `b_v / h` keeps the prediction inside the bound; the
//! truncation after every sweep lets the next sweep's contacts act on positions the final
//! truncation will keep; and each pair between two bodies is solved once, by the later
//! body, against the earlier one's solved positions (solving it also in the earlier body,
//! against the later one's unconstrained prediction, as the particle contacts of
//! [`crate::world`] do, pushed the middle cloth of a stack down onto the one under it every
//! substep, and the gap collapsed).
//!
//! **Kinematic vertices.** A pinned particle moved by an attachment is not truncated (its
//! motion is prescribed). A pair with such motion among the triangles around it gets its
//! contact but bounds nothing: bounding the free side by `γ (D - K)` (`K` the kinematic
//! displacement) is sound but freezes the free side exactly when the moving side comes at
//! it, which lets the moving side through (observed on the turning sphere of `layers`). So
//! the guarantee is between free particles only; against kinematic triangles, as against
//! the shape colliders, the contacts alone act. The search radius grows by twice the largest
//! kinematic displacement of the substep.
//!
//! **What it costs and where it is conservative.** The bound is on a vertex's absolute
//! motion, not its motion relative to its neighbour: two layers 3 mm apart falling together
//! are limited to `γ · 3 mm` per substep each (about 0.32 m/s at 60 Hz with 4 substeps), the
//! price of a guarantee that needs no time of impact; more substeps raise the limit in
//! proportion. Pairs already touching (`d = 0`: a tangle present at load) freeze the vertices
//! around them, so this scheme keeps a tangle as it is instead of undoing it. The search is
//! redone every substep: one grid pass over the vertices and the edges of every participating
//! body, `O(n)` for sheets of bounded density, plus the exact tests of the close pairs;
//! the contacts then cost one 4-particle projection each per iteration.
//!
//! Remaining failures: a pinned (kinematic) body or pinned part of a cloth moving against a
//! sheet faster than its contacts can push the sheet away, within the sheet's bounds, passes
//! through it: `layers`' turning sphere does after the twist starts (a few tens of pairs in
//! the first second with 3 cloths of 24 x 24), and so do `fold`'s turning pins from the
//! second fold on; layers can still be pressed to gaps far below the thickness (thousandths of
//! a millimetre) before the contacts open them again, and at such a gap the bound nearly
//! freezes them; the search and the truncation run on one thread (the same bits on any thread
//! count); intersections present at load are neither found nor undone (Baraff, Witkin and
//! Kass's untangling is not done for open sheets); contacts with static mesh colliders and
//! the shape colliders are the world's and the step's own, outside this bound.

use crate::body::Body;
use crate::constraints::{ConstraintKind, MAX_ARITY};
use crate::error::{check_non_negative, check_parameter, Result};
use crate::geometry::packed::Packed4;
use crate::geometry::queries::closest_point_on_triangle;
use crate::step::Window;
use crate::world::{World, WorldBody};
use glam::{DVec3, Vec3};

/// The settings of triangle contacts ([`crate::world::World::set_triangle_contacts`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleContactSettings {
    /// Distance kept between two triangles (m); independent of the edge length.
    pub thickness: f32,
    /// Pairs closer than this at a substep's start get a contact and bound the displacements
    /// of the vertices around them (m; at least the thickness).
    pub radius: f32,
    /// Coulomb friction coefficient μ between two triangles (static and kinetic).
    pub friction: f32,
    /// The fraction `γ` (< 1/2) of its distance to the nearest primitive a vertex may move in
    /// a substep (module doc, no crossing).
    pub gamma: f32,
}

impl Default for TriangleContactSettings {
    /// 1 mm thickness, 4 mm search radius, friction 0.3, `γ` = 0.45.
    fn default() -> Self {
        TriangleContactSettings {
            thickness: 0.001,
            radius: 0.004,
            friction: 0.3,
            gamma: 0.45,
        }
    }
}

impl TriangleContactSettings {
    /// Checks the settings: thickness > 0, radius >= thickness, friction >= 0,
    /// 0 < gamma < 1/2.
    pub fn validate(&self) -> Result<()> {
        check_parameter(
            "triangle contact thickness",
            self.thickness,
            self.thickness > 0.0 && self.thickness.is_finite(),
            "must be finite and > 0",
        )?;
        check_parameter(
            "triangle contact radius",
            self.radius,
            self.radius >= self.thickness && self.radius.is_finite(),
            "must be finite and at least the thickness",
        )?;
        check_non_negative("triangle contact friction", self.friction)?;
        check_parameter(
            "triangle contact gamma",
            self.gamma,
            self.gamma > 0.0 && self.gamma < 0.5,
            "must be in (0, 1/2): a vertex may move less than half its distance",
        )
    }
}

/// One VT or EE pair found at a substep's start, in the world's numbering of vertices.
#[derive(Clone, Copy, Debug)]
struct Pair {
    /// The four vertices (global): VT the vertex then the triangle's three, EE the two
    /// edges' ends.
    v: [u32; 4],
    /// The coefficients of `X = Σ c_k x_k`.
    c: [f32; 4],
    /// `X₀ / |X₀|`.
    n: Vec3,
    /// `|X₀|`.
    d: f32,
}

/// A participating body's place in the world's arrays.
#[derive(Clone, Debug)]
struct BodySlot {
    /// Its index among the world's bodies.
    index: usize,
    /// Its topology id when the topology tables were made.
    topology: u64,
    /// Its first vertex in the global numbering, and its vertex count.
    first: u32,
    count: u32,
}

/// Triangle contacts of a world: the settings and every table they need, rebuilt as the
/// bodies change (module doc).
#[derive(Clone, Debug, Default)]
pub struct TriangleContacts {
    settings: TriangleContactSettings,
    slots: Vec<BodySlot>,
    /// Per global vertex, the slot of its body.
    owner: Vec<u32>,
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    /// Each triangle's three edges.
    tri_edges: Vec<[u32; 3]>,
    /// The triangles around each vertex: `vt[vt_start[v]..vt_start[v + 1]]`.
    vt_start: Vec<u32>,
    vt: Vec<u32>,
    /// The frame of the positions below (the first participating body's origin).
    common: DVec3,
    /// The vertices at the substep's start, in the common frame.
    x: Vec<Vec3>,
    /// Each vertex's displacement bound for the substep.
    bound: Vec<f32>,
    pairs: Vec<Pair>,
    /// The pairs each slot has a vertex in: `by_slot[s]` indices into `pairs`.
    by_slot: Vec<Vec<u32>>,
    grid: Grid,
}

/// A dense grid of cells over a box, each cell listing the triangles whose grown box meets it.
#[derive(Clone, Debug, Default)]
struct Grid {
    lo: Vec3,
    inv_cell: f32,
    dims: [i32; 3],
    start: Vec<u32>,
    items: Vec<u32>,
    tri_lo: Vec<Vec3>,
    tri_hi: Vec<Vec3>,
}

/// The most cells the dense grid may have per triangle; a box that needs more gets larger cells.
const CELLS_PER_TRIANGLE: usize = 8;

impl Grid {
    fn cell_of(&self, p: Vec3) -> [i32; 3] {
        let q = (p - self.lo) * self.inv_cell;
        [
            (q.x as i32).clamp(0, self.dims[0] - 1),
            (q.y as i32).clamp(0, self.dims[1] - 1),
            (q.z as i32).clamp(0, self.dims[2] - 1),
        ]
    }
    fn index(&self, c: [i32; 3]) -> usize {
        ((c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]) as usize
    }
    /// Calls `f` with every cell index of the box `lo..=hi`.
    fn for_cells(&self, lo: Vec3, hi: Vec3, mut f: impl FnMut(usize)) {
        let (a, b) = (self.cell_of(lo), self.cell_of(hi));
        for z in a[2]..=b[2] {
            for y in a[1]..=b[1] {
                for x in a[0]..=b[0] {
                    f(self.index([x, y, z]));
                }
            }
        }
    }

    /// Lists `triangles` (boxes grown by `grow`) by cell, with a counting sort (no hashing,
    /// the same order on every run).
    fn build(&mut self, x: &[Vec3], triangles: &[[u32; 3]], grow: f32) {
        self.tri_lo.clear();
        self.tri_hi.clear();
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        let mut extent = 0.0f32;
        for t in triangles {
            let [a, b, c] = t.map(|v| x[v as usize]);
            let tl = a.min(b).min(c) - Vec3::splat(grow);
            let th = a.max(b).max(c) + Vec3::splat(grow);
            extent += (th - tl).max_element();
            lo = lo.min(tl);
            hi = hi.max(th);
            self.tri_lo.push(tl);
            self.tri_hi.push(th);
        }
        if triangles.is_empty() {
            self.dims = [1, 1, 1];
            self.lo = Vec3::ZERO;
            self.inv_cell = 1.0;
            self.start.clear();
            self.start.extend([0, 0]);
            self.items.clear();
            return;
        }
        // Cells about the mean triangle's size: a triangle meets a few cells and a cell holds a
        // few triangles per sheet through it.
        let mut cell = (extent / triangles.len() as f32).max(1e-6);
        let size = (hi - lo).max(Vec3::splat(1e-6));
        let limit = (CELLS_PER_TRIANGLE * triangles.len()).max(64) as f32;
        loop {
            let d = (size / cell).ceil();
            if d.x * d.y * d.z <= limit {
                self.dims = [d.x as i32, d.y as i32, d.z as i32];
                break;
            }
            cell *= 1.5;
        }
        self.lo = lo;
        self.inv_cell = 1.0 / cell;
        let cells = (self.dims[0] * self.dims[1] * self.dims[2]) as usize;
        self.start.clear();
        self.start.resize(cells + 1, 0);
        for t in 0..triangles.len() {
            let (l, h) = (self.tri_lo[t], self.tri_hi[t]);
            let (a, b) = (self.cell_of(l), self.cell_of(h));
            for z in a[2]..=b[2] {
                for y in a[1]..=b[1] {
                    for xx in a[0]..=b[0] {
                        let i = self.index([xx, y, z]);
                        self.start[i + 1] += 1;
                    }
                }
            }
        }
        for i in 0..cells {
            self.start[i + 1] += self.start[i];
        }
        self.items.clear();
        self.items.resize(self.start[cells] as usize, 0);
        let mut fill: Vec<u32> = self.start[..cells].to_vec();
        for t in 0..triangles.len() {
            let (l, h) = (self.tri_lo[t], self.tri_hi[t]);
            let (a, b) = (self.cell_of(l), self.cell_of(h));
            for z in a[2]..=b[2] {
                for y in a[1]..=b[1] {
                    for xx in a[0]..=b[0] {
                        let i = self.index([xx, y, z]);
                        self.items[fill[i] as usize] = t as u32;
                        fill[i] += 1;
                    }
                }
            }
        }
    }

    fn cell(&self, i: usize) -> &[u32] {
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// The closest points of segments `p1 q1` and `p2 q2`: their parameters `(s, t)` (Ericson,
/// "Real-Time Collision Detection", §5.1.9).
fn closest_segments(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> (f32, f32) {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    const EPS: f32 = 1e-20;
    if a <= EPS && e <= EPS {
        return (0.0, 0.0);
    }
    if a <= EPS {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= EPS {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let mut s = if denom > 0.0 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

/// Whether boxes `(lo, hi)` meet.
fn boxes_meet(a: (Vec3, Vec3), b: (Vec3, Vec3)) -> bool {
    a.0.cmple(b.1).all() && a.1.cmpge(b.0).all()
}

impl TriangleContacts {
    /// Triangle contacts with `settings` (checked).
    pub fn new(settings: TriangleContactSettings) -> Result<Self> {
        settings.validate()?;
        Ok(TriangleContacts {
            settings,
            ..Default::default()
        })
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &TriangleContactSettings {
        &self.settings
    }

    /// Number of VT and EE pairs found at the start of the last substep.
    #[must_use]
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// The least distance of the pairs found at the start of the last substep, with the
    /// world's indices of the bodies on each side (`None` when no pair was found): the
    /// thinnest gap between two triangles that share no vertex.
    #[must_use]
    pub fn thinnest(&self) -> Option<(f32, usize, usize)> {
        self.pairs
            .iter()
            .min_by(|a, b| a.d.total_cmp(&b.d))
            .map(|p| {
                let body = |v: u32| self.slots[self.owner[v as usize] as usize].index;
                (p.d, body(p.v[0]), body(p.v[3]))
            })
    }

    /// The smallest displacement bound of the last substep over the vertices that have one
    /// below `γ R` (`None` when none is that close to anything).
    #[must_use]
    pub fn tightest_bound(&self) -> Option<f32> {
        let cap = self.settings.gamma * self.settings.radius;
        self.bound
            .iter()
            .copied()
            .filter(|&b| b < cap)
            .min_by(f32::total_cmp)
    }

    /// The slot of body `index`, if it takes part.
    fn slot_of(&self, index: usize) -> Option<usize> {
        self.slots.iter().position(|s| s.index == index)
    }

    /// Rebuilds the topology tables if the participating bodies or their topologies changed.
    fn refresh_topology(&mut self, bodies: &[&Body]) {
        let same = self.slots.len()
            == bodies
                .iter()
                .filter(|b| !b.topology.triangles.is_empty())
                .count()
            && self.slots.iter().all(|s| {
                bodies.get(s.index).is_some_and(|b| {
                    b.topology_id() == s.topology && b.particles.len() as u32 == s.count
                })
            });
        if same && !self.slots.is_empty() {
            return;
        }
        self.slots.clear();
        self.owner.clear();
        self.triangles.clear();
        let mut first = 0u32;
        for (index, b) in bodies.iter().enumerate() {
            if b.topology.triangles.is_empty() {
                continue;
            }
            let count = b.particles.len() as u32;
            let slot = self.slots.len() as u32;
            self.slots.push(BodySlot {
                index,
                topology: b.topology_id(),
                first,
                count,
            });
            self.owner.extend(std::iter::repeat_n(slot, count as usize));
            self.triangles
                .extend(b.topology.triangles.iter().map(|t| t.map(|v| v + first)));
            first += count;
        }
        let n = first as usize;
        // Edges, unique, with each triangle's three.
        let mut keyed: Vec<([u32; 2], u32)> = Vec::with_capacity(3 * self.triangles.len());
        for (t, tri) in self.triangles.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                keyed.push(([a.min(b), a.max(b)], (3 * t + k) as u32));
            }
        }
        keyed.sort_unstable();
        self.edges.clear();
        self.tri_edges.clear();
        self.tri_edges.resize(self.triangles.len(), [0; 3]);
        for (i, (e, slot)) in keyed.iter().enumerate() {
            if i == 0 || keyed[i - 1].0 != *e {
                self.edges.push(*e);
            }
            let id = (self.edges.len() - 1) as u32;
            self.tri_edges[*slot as usize / 3][*slot as usize % 3] = id;
        }
        self.vt_start.clear();
        self.vt_start.resize(n + 1, 0);
        for tri in &self.triangles {
            for &v in tri {
                self.vt_start[v as usize + 1] += 1;
            }
        }
        for i in 0..n {
            self.vt_start[i + 1] += self.vt_start[i];
        }
        self.vt.clear();
        self.vt.resize(self.vt_start[n] as usize, 0);
        let mut fill = self.vt_start[..n].to_vec();
        for (t, tri) in self.triangles.iter().enumerate() {
            for &v in tri {
                self.vt[fill[v as usize] as usize] = t as u32;
                fill[v as usize] += 1;
            }
        }
    }

    /// Step 1 of a substep (module doc): the bodies' vertices at the substep's start, the
    /// pairs closer than the search radius and every vertex's displacement bound. `bodies` are
    /// the world's bodies in its order.
    pub(crate) fn begin_substep(&mut self, bodies: &[&Body], window: Window) {
        self.refresh_topology(bodies);
        self.pairs.clear();
        self.by_slot.iter_mut().for_each(Vec::clear);
        self.by_slot.resize(self.slots.len(), Vec::new());
        self.x.clear();
        self.bound.clear();
        let Some(first) = self.slots.first() else {
            return;
        };
        self.common = bodies[first.index].origin();
        for s in &self.slots {
            let b = bodies[s.index];
            let shift = (b.origin() - self.common).as_vec3();
            self.x.extend(b.particles.x.iter().map(|p| p.xyz() + shift));
        }
        let n = self.x.len();
        // Kinematic motion: each pinned particle's displacement to its attachment's target at
        // the substep's end, then, per vertex, the largest over the triangles around it.
        let mut kin = vec![0.0f32; n];
        for s in &self.slots {
            let b = bodies[s.index];
            for a in &b.attachments {
                let i = a.particle as usize;
                if let Some(p) = b.particles.x.get(i) {
                    kin[s.first as usize + i] = (a.from.lerp(a.to, window.t1) - p.xyz()).length();
                }
            }
        }
        let mut tri_kin = Vec::with_capacity(self.triangles.len());
        tri_kin.extend(
            self.triangles
                .iter()
                .map(|t| t.iter().map(|&v| kin[v as usize]).fold(0.0f32, f32::max)),
        );
        let khat: Vec<f32> = (0..n)
            .map(|v| {
                self.vt[self.vt_start[v] as usize..self.vt_start[v + 1] as usize]
                    .iter()
                    .map(|&t| tri_kin[t as usize])
                    .fold(kin[v], f32::max)
            })
            .collect();
        let k_max = khat.iter().copied().fold(0.0f32, f32::max);
        let cap = self.settings.radius;
        // Pairs up to `cap + 2 k_max` apart: one farther is still `cap` apart after both
        // sides' kinematic motion.
        let r = cap + 2.0 * k_max;
        // Each triangle listed in every cell its box grown by `r` meets, so that a vertex or
        // an edge within `r` of it finds it in a cell of its own.
        self.grid.build(&self.x, &self.triangles, r);
        let mut d_v = vec![cap; n];
        let mut d_t = vec![cap; self.triangles.len()];
        let mut d_e = vec![cap; self.edges.len()];
        let x = &self.x;
        let grid = &self.grid;
        // VT: each vertex against the triangles of its cell.
        for v in 0..n {
            let p = x[v];
            let cell = grid.index(grid.cell_of(p));
            for &t in grid.cell(cell) {
                let t = t as usize;
                let tri = self.triangles[t];
                if tri.contains(&(v as u32)) {
                    continue;
                }
                // The vertex within `r` of the triangle's box (grown by `r` in the grid).
                if !boxes_meet((p, p), (grid.tri_lo[t], grid.tri_hi[t])) {
                    continue;
                }
                let [a, b, c] = tri.map(|k| x[k as usize]);
                let (q, bary) = closest_point_on_triangle(p, a, b, c);
                let d = (p - q).length();
                if !(d < r) {
                    continue;
                }
                // A pair with kinematic motion around it gets its contact but bounds nothing
                // (module doc, kinematic vertices): freezing the free side would let the
                // moving one through.
                if khat[v] == 0.0 && tri.iter().all(|&w| khat[w as usize] == 0.0) {
                    d_v[v] = d_v[v].min(d);
                    d_t[t] = d_t[t].min(d);
                }
                if d > 0.0 {
                    self.pairs.push(Pair {
                        v: [v as u32, tri[0], tri[1], tri[2]],
                        c: [1.0, -bary.x, -bary.y, -bary.z],
                        n: (p - q) / d,
                        d,
                    });
                }
            }
        }
        // EE: each edge against the edges of the triangles of the cells its box meets, each
        // unordered pair once (the other edge's id above its own).
        let mut candidates: Vec<u32> = Vec::new();
        for (e, &[a, b]) in self.edges.iter().enumerate() {
            let (pa, pb) = (x[a as usize], x[b as usize]);
            let (lo, hi) = (pa.min(pb), pa.max(pb));
            candidates.clear();
            grid.for_cells(lo, hi, |cell| {
                for &t in grid.cell(cell) {
                    let t = t as usize;
                    if !boxes_meet((lo, hi), (grid.tri_lo[t], grid.tri_hi[t])) {
                        continue;
                    }
                    for &e2 in &self.tri_edges[t] {
                        if e2 as usize > e {
                            candidates.push(e2);
                        }
                    }
                }
            });
            candidates.sort_unstable();
            candidates.dedup();
            for &e2 in &candidates {
                let [c, d] = self.edges[e2 as usize];
                if c == a || c == b || d == a || d == b {
                    continue;
                }
                let (pc, pd) = (x[c as usize], x[d as usize]);
                let (lo2, hi2) = (pc.min(pd), pc.max(pd));
                if !boxes_meet((lo - Vec3::splat(r), hi + Vec3::splat(r)), (lo2, hi2)) {
                    continue;
                }
                let (s, t) = closest_segments(pa, pb, pc, pd);
                let p1 = pa + (pb - pa) * s;
                let p2 = pc + (pd - pc) * t;
                let dist = (p1 - p2).length();
                if !(dist < r) {
                    continue;
                }
                if [a, b, c, d].iter().all(|&w| khat[w as usize] == 0.0) {
                    d_e[e] = d_e[e].min(dist);
                    d_e[e2 as usize] = d_e[e2 as usize].min(dist);
                }
                if dist > 0.0 {
                    self.pairs.push(Pair {
                        v: [a, b, c, d],
                        c: [1.0 - s, s, -(1.0 - t), -t],
                        n: (p1 - p2) / dist,
                        d: dist,
                    });
                }
            }
        }
        // The bounds: D_t over each triangle, b_v = γ min over the triangles around v.
        let gamma = self.settings.gamma;
        let big_d: Vec<f32> = self
            .triangles
            .iter()
            .zip(&self.tri_edges)
            .zip(&d_t)
            .map(|((tri, es), &dt)| {
                let dv = tri.iter().map(|&v| d_v[v as usize]).fold(dt, f32::min);
                es.iter().map(|&e| d_e[e as usize]).fold(dv, f32::min)
            })
            .collect();
        self.bound.resize(n, f32::INFINITY);
        for v in 0..n {
            let around = &self.vt[self.vt_start[v] as usize..self.vt_start[v + 1] as usize];
            if around.is_empty() {
                continue;
            }
            let d = around
                .iter()
                .map(|&t| big_d[t as usize])
                .fold(cap, f32::min);
            self.bound[v] = gamma * d;
        }
        // Each pair to the slots of its vertices, in pair order.
        for (k, pair) in self.pairs.iter().enumerate() {
            let mut seen = [u32::MAX; 4];
            for (j, &v) in pair.v.iter().enumerate() {
                let s = self.owner[v as usize];
                if !seen[..j].contains(&s) {
                    self.by_slot[s as usize].push(k as u32);
                }
                seen[j] = s;
            }
        }
    }

    /// Step 2 of a substep (module doc) for body `index`: its contacts into `table`.
    /// `others(o)` gives body `o`'s positions now in its own frame with that frame's origin,
    /// and whether they are solved (`None`: body `o` is not available, its points are taken at
    /// the substep's start, rigid); `origin` is this body's origin, `h` the substep and
    /// `depenetrate` the most a pair already closer than the thickness is pushed apart in it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fill_table<'a>(
        &self,
        index: usize,
        origin: DVec3,
        own: &[Packed4],
        others: &dyn Fn(usize) -> Option<(&'a [Packed4], DVec3, bool)>,
        h: f32,
        depenetrate: f32,
        table: &mut TriangleContactTable,
    ) {
        table.clear(self.settings.friction, self.settings.thickness);
        let Some(slot) = self.slot_of(index) else {
            return;
        };
        let me = &self.slots[slot];
        table.x0.extend(own.iter().map(|p| p.xyz()));
        table
            .bound
            .extend_from_slice(&self.bound[me.first as usize..(me.first + me.count) as usize]);
        let start_shift = (self.common - origin).as_vec3();
        let r = self.settings.thickness;
        for &k in &self.by_slot[slot] {
            let pair = &self.pairs[k as usize];
            let mut ids = [0u32; MAX_ARITY];
            let mut coef = [0f32; MAX_ARITY];
            let mut count = 0;
            let (mut ext, mut ext_motion, mut ext_w) = (0.0f32, Vec3::ZERO, 0.0f32);
            let mut rigid = true;
            for (&v, &c) in pair.v.iter().zip(&pair.c) {
                let s = self.owner[v as usize] as usize;
                let local = v - self.slots[s].first;
                if s == slot {
                    ids[count] = local;
                    coef[count] = c;
                    count += 1;
                    continue;
                }
                let start = self.x[v as usize] + start_shift;
                let (now, w, solved) = match others(self.slots[s].index) {
                    Some((x, o, solved)) => match x.get(local as usize) {
                        Some(q) => (q.xyz() + (o - origin).as_vec3(), q.w, solved),
                        None => (start, 0.0, true),
                    },
                    None => (start, 0.0, true),
                };
                rigid &= solved;
                ext += c * pair.n.dot(now);
                ext_motion += c * (now - start);
                ext_w += c * c * w;
            }
            if count == 0 || ids[..count].iter().all(|&i| own[i as usize].w == 0.0) {
                continue;
            }
            // A pair with a body not yet solved this substep is left to that body, which
            // meets this one solved, rigidly (module doc, between bodies).
            if !rigid {
                continue;
            }
            let target = r.min(pair.d + depenetrate);
            let alpha = 0.0;
            let _ = (ext_w, h);
            table.push(
                &ids[..count],
                &coef[..count],
                pair.n,
                target - ext,
                alpha,
                ext_motion,
            );
        }
    }

    /// Step 3 of a substep (module doc) for body `index` after its step: friction on its
    /// contacts (`lambda` the table's multipliers, `k` the PBD scale, `h` the substep), then
    /// every vertex's displacement since `x_prev` truncated to its bound, the velocity
    /// recomputed for the truncated ones. Returns how many were truncated.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish_body(
        &self,
        index: usize,
        table: &TriangleContactTable,
        lambda: &[f32],
        k: f32,
        h: f32,
        x: &mut [Packed4],
        x_prev: &[Packed4],
        v: &mut [Packed4],
    ) -> usize {
        table.apply_friction(lambda, k, 1.0 / h, x, x_prev, v);
        if self.slot_of(index).is_none() {
            return 0;
        }
        let before: Vec<Vec3> = x.iter().map(|p| p.xyz()).collect();
        let truncated = truncate(x, &table.x0, &table.bound);
        if truncated > 0 {
            for ((p, q), (vel, x0)) in x.iter().zip(&before).zip(v.iter_mut().zip(x_prev)) {
                if p.xyz() != *q {
                    vel.set_xyz((p.xyz() - x0.xyz()) / h);
                }
            }
        }
        truncated
    }
}

impl World {
    /// Turns triangle contacts (module doc) on with `settings` for every body of the world
    /// that has triangles, within a body and between bodies, or off (`None`). While on, a
    /// body with triangles meets the other bodies with triangles through these contacts only
    /// (not through the world's particle-against-surface contacts); static mesh colliders
    /// and shape colliders are unchanged. Bad settings get a [`crate::WobbleError`].
    pub fn set_triangle_contacts(
        &mut self,
        settings: Option<TriangleContactSettings>,
    ) -> Result<()> {
        self.triangle_contacts = settings.map(TriangleContacts::new).transpose()?;
        if self.triangle_contacts.is_none() {
            for b in &mut self.bodies {
                if let Some(k) = b.body.constraints.position_of::<TriangleContactTable>() {
                    b.body.constraints_mut().extra.remove(k);
                }
            }
        }
        Ok(())
    }

    /// The triangle contacts, when on ([`World::set_triangle_contacts`]).
    #[must_use]
    pub fn triangle_contacts(&self) -> Option<&TriangleContacts> {
        self.triangle_contacts.as_ref()
    }
}

/// Step 1 of a substep with triangle contacts (module doc): gives every body with triangles
/// its contact table (once) and finds the pairs and bounds at the substep's start. Nothing
/// when off.
pub(super) fn begin(
    triangles: &mut Option<TriangleContacts>,
    bodies: &mut [WorldBody],
    window: Window,
) {
    let Some(tc) = triangles else {
        return;
    };
    for b in bodies.iter_mut() {
        if !b.body.topology.triangles.is_empty()
            && b.body
                .constraints
                .position_of::<TriangleContactTable>()
                .is_none()
        {
            b.body
                .constraints_mut()
                .push_kind(Box::new(TriangleContactTable::default()));
        }
    }
    let bodies: Vec<&Body> = bodies.iter().map(|b| &b.body).collect();
    tc.begin_substep(&bodies, window);
}

/// Whether body `body` meets the other bodies through `triangles` (on, and it has
/// triangles), so that the world's particle-against-surface contacts between it and them are
/// left out.
pub(super) fn takes_part(triangles: Option<&TriangleContacts>, body: &Body) -> bool {
    triangles.is_some() && !body.topology.triangles.is_empty()
}

/// Steps 2 and 3 of a substep (module doc) around `step`, for body `index`: fills its table,
/// runs `step`, then friction and the truncation. `others` as [`TriangleContacts::fill_table`].
#[allow(clippy::too_many_arguments)]
pub(super) fn around_step<'a, R>(
    triangles: Option<&TriangleContacts>,
    body: &mut Body,
    index: usize,
    others: &dyn Fn(usize) -> Option<(&'a [Packed4], DVec3, bool)>,
    h: f32,
    depenetrate: f32,
    k: f32,
    step: impl FnOnce(&mut Body) -> Result<R>,
) -> Result<(R, usize)> {
    let Some(tc) = triangles.filter(|_| !body.topology.triangles.is_empty()) else {
        return step(body).map(|r| (r, 0));
    };
    let kind = body
        .constraints
        .position_of::<TriangleContactTable>()
        .ok_or(crate::error::WobbleError::UnsuitableBody {
            what: "a world step with triangle contacts",
            needs: "the triangle contact table the world gives a body (it was removed)",
        })?;
    let origin = body.origin();
    {
        let Body {
            constraints,
            particles,
            ..
        } = &mut *body;
        let table: &mut TriangleContactTable = constraints.extra[kind]
            .as_any_mut()
            .downcast_mut()
            .expect("the triangle contact table");
        tc.fill_table(index, origin, &particles.x, others, h, depenetrate, table);
        // Each velocity clamped to the bound over the substep: the prediction then stays
        // inside the bound and the truncation after the solve, which pulls a particle back
        // along its own path, rarely acts (a truncated slide down a slope would otherwise
        // keep the slope's normal part of the fall and close the gap under it substep after
        // substep).
        for (v, &b) in particles.v.iter_mut().zip(&table.bound) {
            let speed = v.xyz().length();
            if speed * h > b {
                v.set_xyz(v.xyz() * (b / (speed * h)));
            }
        }
    }
    let r = step(body)?;
    let offset = body.constraints.offsets()[kind + 1];
    let Body {
        constraints,
        particles: p,
        scratch,
        ..
    } = &mut *body;
    let table: &TriangleContactTable = constraints.extra[kind]
        .as_any()
        .downcast_ref()
        .expect("the triangle contact table");
    let count = table.len();
    let lambda = &scratch.lambda[offset..offset + count];
    tc.finish_body(index, table, lambda, k, h, &mut p.x, &p.x_prev, &mut p.v);
    Ok((r, count))
}

/// The triangle contacts of one body for one substep, a constraint table the step loop
/// projects after every solver iteration: `C = o - n · Σ c_k x_k <= 0` over the body's own
/// particles of the pair (the other body's points folded into `o`).
#[derive(Clone, Debug, Default)]
pub struct TriangleContactTable {
    ids: Vec<u32>,
    start: Vec<u32>,
    coef: Vec<f32>,
    normal: Vec<Vec3>,
    offset: Vec<f32>,
    compliance: Vec<f32>,
    /// `Σ c_k Δx_k` of the other body's points over the substep (zero within a body).
    motion: Vec<Vec3>,
    friction: f32,
    scale: f32,
    /// Each particle's position at the substep's start and its displacement bound (empty:
    /// none): [`ConstraintKind::project_all`] truncates to them after every sweep.
    x0: Vec<Vec3>,
    bound: Vec<f32>,
}

impl TriangleContactTable {
    fn clear(&mut self, friction: f32, scale: f32) {
        self.ids.clear();
        self.coef.clear();
        self.start.clear();
        self.start.push(0);
        self.normal.clear();
        self.offset.clear();
        self.compliance.clear();
        self.motion.clear();
        self.friction = friction;
        self.scale = scale;
        self.x0.clear();
        self.bound.clear();
    }

    fn push(&mut self, ids: &[u32], coef: &[f32], n: Vec3, offset: f32, alpha: f32, motion: Vec3) {
        if self.start.is_empty() {
            self.start.push(0);
        }
        self.ids.extend_from_slice(ids);
        self.coef.extend_from_slice(coef);
        self.start.push(self.ids.len() as u32);
        self.normal.push(n);
        self.offset.push(offset);
        self.compliance.push(alpha);
        self.motion.push(motion);
    }

    fn range(&self, c: usize) -> std::ops::Range<usize> {
        self.start[c] as usize..self.start[c + 1] as usize
    }

    /// Friction (module doc) on the contacts that pushed in the substep.
    fn apply_friction(
        &self,
        lambda: &[f32],
        k: f32,
        inv_h: f32,
        x: &mut [Packed4],
        x_prev: &[Packed4],
        v: &mut [Packed4],
    ) {
        let mu = self.friction;
        if mu <= 0.0 {
            return;
        }
        for (c, &l) in lambda.iter().enumerate().take(self.len()) {
            if l >= 0.0 {
                continue;
            }
            let range = self.range(c);
            let (ids, coef) = (&self.ids[range.clone()], &self.coef[range]);
            let n = self.normal[c];
            let mut weight = 0.0;
            let mut rel = self.motion[c];
            for (&i, &ck) in ids.iter().zip(coef) {
                let i = i as usize;
                weight += ck * ck * x[i].w;
                rel += ck * (x[i].xyz() - x_prev[i].xyz());
            }
            if weight <= 0.0 {
                continue;
            }
            // The normal correction of the relative point: -k λ Σ c_k² w_k.
            let pushed = -k * l * weight;
            let tangential = rel - n * rel.dot(n);
            let t_len = tangential.length();
            if t_len <= 0.0 {
                continue;
            }
            let removed = tangential * (mu * pushed / t_len).min(1.0);
            for (&i, &ck) in ids.iter().zip(coef) {
                let i = i as usize;
                let dx = removed * (ck * x[i].w / weight);
                x[i].set_xyz(x[i].xyz() - dx);
                v[i].set_xyz(v[i].xyz() - dx * inv_h);
            }
        }
    }
}

impl ConstraintKind for TriangleContactTable {
    fn name(&self) -> &'static str {
        "triangle contact"
    }
    fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }
    fn particles(&self, c: usize) -> &[u32] {
        &self.ids[self.range(c)]
    }
    fn compliance(&self, c: usize) -> f32 {
        self.compliance[c]
    }
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        let range = self.range(c);
        let n = self.normal[c];
        let mut along = 0.0;
        for (slot, (&i, &ck)) in self.ids[range.clone()]
            .iter()
            .zip(&self.coef[range])
            .enumerate()
        {
            grad[slot] = -ck * n;
            along += ck * n.dot(x[i as usize].xyz());
        }
        self.offset[c] - along
    }
    /// The contacts in storage order, as [`crate::constraints::project_generic`] projects each,
    /// then every particle's displacement since the substep's start truncated to its bound
    /// (module doc): the next iteration's sweep then starts from positions inside the bounds,
    /// so that the solve settles on contacts the final truncation keeps.
    fn project_all(&self, x: &mut [Packed4], lambda: &mut [f32], inv_dt2: f32, k: f32) {
        for (c, l) in lambda.iter_mut().enumerate().take(self.len()) {
            crate::constraints::project_generic(self, c, x, l, self.compliance[c] * inv_dt2, k);
        }
        truncate(x, &self.x0, &self.bound);
    }
    crate::constraints::step_loop_contact_accessors!(ids);
}

/// Each particle's displacement from `start` truncated to `bound` (pinned particles and those
/// beyond the slices left alone); returns how many were truncated.
fn truncate(x: &mut [Packed4], start: &[Vec3], bound: &[f32]) -> usize {
    let mut truncated = 0;
    for ((p, &s), &b) in x.iter_mut().zip(start).zip(bound) {
        if p.w == 0.0 {
            continue;
        }
        let d = p.xyz() - s;
        let len2 = d.length_squared();
        if len2 > b * b {
            // Scaled a hair below the bound so that the rounding of the product cannot land
            // past it.
            let len = len2.sqrt();
            p.set_xyz(s + d * (b / len * (1.0 - 4.0 * f32::EPSILON)));
            truncated += 1;
        }
    }
    truncated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_segments_of_crossing_and_parallel_edges() {
        let (s, t) = closest_segments(
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, -1.0),
            Vec3::new(0.0, 1.0, 1.0),
        );
        assert!((s - 0.5).abs() < 1e-6 && (t - 0.5).abs() < 1e-6, "{s} {t}");
        let (s, t) = closest_segments(
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(2.0, 1.0, 0.0),
            Vec3::new(3.0, 1.0, 0.0),
        );
        assert_eq!((s, t), (1.0, 0.0));
    }

    #[test]
    fn bad_settings_are_refused() {
        let bad = [
            TriangleContactSettings {
                thickness: 0.0,
                ..Default::default()
            },
            TriangleContactSettings {
                radius: 0.0005,
                ..Default::default()
            },
            TriangleContactSettings {
                friction: -1.0,
                ..Default::default()
            },
            TriangleContactSettings {
                gamma: 0.5,
                ..Default::default()
            },
            TriangleContactSettings {
                thickness: f32::NAN,
                ..Default::default()
            },
        ];
        for s in bad {
            assert!(TriangleContacts::new(s).is_err(), "{s:?}");
        }
        assert!(TriangleContacts::new(TriangleContactSettings::default()).is_ok());
    }
}
