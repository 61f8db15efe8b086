//! A force-based mass-spring model with four explicit integrators, beside the position-based
//! solvers, and a search for the largest stiffness each integrator survives.
//!
//! Theory (Provot 1995, "Deformation constraints in a mass-spring model..."; the integrators as
//! in Hairer, Lubich, Wanner, "Geometric numerical integration"). Springs join particle pairs:
//! structural (the body's structural distance constraints), shear (its other distance
//! constraints) and bend (the two ends of every nearly straight two-edge path of structural
//! springs, i.e. (i, i+2) along rows and columns of a grid). Each spring `(i, j)` pushes
//!
//! ```text
//! f_i = -(k (l - l0) + c (v_i - v_j)·n) n = -f_j,   n = (x_i - x_j) / l
//! ```
//!
//! (Hooke plus damping along the spring), gravity adds `m g`. With `a(x, v) = F / m` and step h:
//!
//! ```text
//! explicit Euler:       x' = x + h v,                 v' = v + h a(x, v)
//! semi-implicit Euler:  v' = v + h a(x, v),           x' = x + h v'
//! velocity Verlet:      x' = x + h v + ½ h² a,        v' = v + ½ h (a + a(x', v + h a))
//! RK4:                  the classic fourth-order Runge-Kutta on (x, v)
//! ```
//!
//! For an undamped spring of frequency ω, explicit Euler amplifies every oscillation by
//! √(1 + h²ω²) per step (unstable at any stiffness, only slowly for small ω); semi-implicit
//! Euler and Verlet are stable for hω < 2, RK4 for hω < 2√2. Stability here means: over `steps`
//! steps from rest, every position and velocity stays finite and the mechanical energy
//! (kinetic + gravitational + spring) never rises above its initial value by more than
//! `M |g| D` (the work gravity does moving the whole mass M through the body's bounding-box
//! diagonal D, at least 1 cm). [`largest_stable_stiffness`] finds the largest such stiffness by
//! bracketing (×4) and bisection in log space, assuming stability is monotone in k.
//!
//! Colliders are handled after each step by pushing particles out and removing the inward
//! normal velocity (perfectly inelastic, with Coulomb friction on the tangential velocity).

use glam::Vec3;
use solver_core::body::Body;
use solver_core::error::check_non_negative;
use solver_core::error::{check_dt, check_finite, Result, WobbleError};
use solver_core::geometry::packed::Packed4;
use std::str::FromStr;

/// Which role a spring plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpringKind {
    /// Along the structural edges.
    Structural,
    /// Across quads (the body's non-structural distance constraints).
    Shear,
    /// Between the ends of straight two-edge paths.
    Bend,
}

/// Spring stiffnesses (N/m) per kind and the damping along springs (N·s/m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringParams {
    /// Structural stiffness.
    pub structural: f32,
    /// Shear stiffness.
    pub shear: f32,
    /// Bend stiffness.
    pub bend: f32,
    /// Damping coefficient c along every spring.
    pub damping: f32,
}

impl SpringParams {
    /// The same stiffness `k` for every kind of spring.
    pub fn uniform(k: f32, damping: f32) -> Self {
        SpringParams {
            structural: k,
            shear: k,
            bend: k,
            damping,
        }
    }

    /// Checks that every coefficient is finite and >= 0.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("structural stiffness", self.structural),
            ("shear stiffness", self.shear),
            ("bend stiffness", self.bend),
            ("spring damping", self.damping),
        ] {
            check_non_negative(name, v)?;
        }
        Ok(())
    }
}

/// A time integrator for the mass-spring model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Integrator {
    /// Forward (explicit) Euler.
    ExplicitEuler,
    /// Semi-implicit (symplectic) Euler.
    SemiImplicitEuler,
    /// Velocity Verlet.
    Verlet,
    /// Classic fourth-order Runge-Kutta.
    Rk4,
}

impl Integrator {
    /// Every integrator, in the order of the CLI.
    pub const ALL: [Integrator; 4] = [
        Integrator::ExplicitEuler,
        Integrator::SemiImplicitEuler,
        Integrator::Verlet,
        Integrator::Rk4,
    ];

    /// The name the CLI knows it by.
    pub fn name(self) -> &'static str {
        match self {
            Integrator::ExplicitEuler => "explicit",
            Integrator::SemiImplicitEuler => "semi-implicit",
            Integrator::Verlet => "verlet",
            Integrator::Rk4 => "rk4",
        }
    }
}

impl FromStr for Integrator {
    type Err = WobbleError;
    fn from_str(s: &str) -> Result<Self> {
        solver_core::error::parse_named("integrator", s, &Integrator::ALL, Integrator::name)
    }
}

/// The springs of a body and the integrator's scratch buffers.
#[derive(Clone, Debug)]
pub struct MassSpring {
    /// Particle pairs.
    pub pairs: Vec<[u32; 2]>,
    /// Rest lengths.
    pub rest: Vec<f32>,
    /// Role of each spring.
    pub kind: Vec<SpringKind>,
    /// Stiffness of each spring (N/m).
    pub stiffness: Vec<f32>,
    /// Damping along every spring (N·s/m).
    pub damping: f32,
    /// The integrator.
    pub integrator: Integrator,
    // Scratch: accelerations of the stages, and a stage state.
    acc: [Vec<Vec3>; 4],
    vel: [Vec<Vec3>; 4],
    stage_x: Vec<Packed4>,
    stage_v: Vec<Packed4>,
    backup_x: Vec<Packed4>,
    backup_v: Vec<Packed4>,
}

impl MassSpring {
    /// Springs from a body's distance constraints (structural prefix, then shear) plus bend
    /// springs across straight two-edge structural paths (cosine of the angle at the middle
    /// particle below -0.99 in the rest pose), with stiffnesses from `params`.
    pub fn from_body(body: &Body, params: SpringParams, integrator: Integrator) -> Result<Self> {
        params.validate()?;
        let d = &body.constraints().distance;
        let structural = if body.topology().structural > 0 {
            body.topology().structural.min(d.len())
        } else {
            d.len()
        };
        let mut ms = MassSpring {
            pairs: Vec::with_capacity(d.len() * 3 / 2),
            rest: Vec::new(),
            kind: Vec::new(),
            stiffness: Vec::new(),
            damping: params.damping,
            integrator,
            acc: Default::default(),
            vel: Default::default(),
            stage_x: Vec::new(),
            stage_v: Vec::new(),
            backup_x: Vec::new(),
            backup_v: Vec::new(),
        };
        for c in 0..d.len() {
            let (kind, k) = if c < structural {
                (SpringKind::Structural, params.structural)
            } else {
                (SpringKind::Shear, params.shear)
            };
            ms.pairs.push(d.pairs[c]);
            ms.rest.push(d.rest[c]);
            ms.kind.push(kind);
            ms.stiffness.push(k);
        }
        let x = &body.particles().x();
        let n = x.len();
        let mut nbr: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &[i, j] in &d.pairs[..structural] {
            nbr[i as usize].push(j);
            nbr[j as usize].push(i);
        }
        for (j, around) in nbr.iter().enumerate() {
            let pj = x[j].xyz();
            for (a, &i) in around.iter().enumerate() {
                for &k in &around[a + 1..] {
                    let (u, w) = (x[i as usize].xyz() - pj, x[k as usize].xyz() - pj);
                    let denom = u.length() * w.length();
                    if denom > 0.0 && u.dot(w) < -0.99 * denom {
                        let rest = (x[i as usize].xyz() - x[k as usize].xyz()).length();
                        ms.pairs.push([i.min(k), i.max(k)]);
                        ms.rest.push(rest);
                        ms.kind.push(SpringKind::Bend);
                        ms.stiffness.push(params.bend);
                    }
                }
            }
        }
        Ok(ms)
    }

    /// Sets every spring's stiffness to `k` (N/m).
    pub fn set_uniform_stiffness(&mut self, k: f32) -> Result<()> {
        SpringParams::uniform(k, 0.0).validate()?;
        self.stiffness.iter_mut().for_each(|s| *s = k);
        Ok(())
    }

    fn ensure_scratch(&mut self, n: usize) {
        if self.stage_x.len() != n {
            for b in self.acc.iter_mut().chain(self.vel.iter_mut()) {
                *b = vec![Vec3::ZERO; n];
            }
            self.stage_x = vec![Packed4::default(); n];
            self.stage_v = vec![Packed4::default(); n];
            self.backup_x = vec![Packed4::default(); n];
            self.backup_v = vec![Packed4::default(); n];
        }
    }

    /// Writes `a(x, v)` (gravity, external forces and springs over the mass) into `out`.
    #[allow(clippy::too_many_arguments)]
    fn accelerations(
        pairs: &[[u32; 2]],
        rest: &[f32],
        stiffness: &[f32],
        damping: f32,
        x: &[Packed4],
        v: &[Packed4],
        external: &[Packed4],
        g: Vec3,
        out: &mut [Vec3],
    ) {
        for i in 0..x.len() {
            let w = x[i].w;
            out[i] = if w == 0.0 {
                Vec3::ZERO
            } else {
                g + external[i].xyz() * w
            };
        }
        for (s, &[i, j]) in pairs.iter().enumerate() {
            let (i, j) = (i as usize, j as usize);
            let d = x[i].xyz() - x[j].xyz();
            let l = d.length();
            if l <= 0.0 {
                continue;
            }
            let n = d / l;
            let rel = (v[i].xyz() - v[j].xyz()).dot(n);
            let f = n * -(stiffness[s] * (l - rest[s]) + damping * rel);
            out[i] += f * x[i].w;
            out[j] -= f * x[j].w;
        }
    }

    /// Mechanical energy: kinetic + gravitational (of free particles) + spring.
    pub fn energy(&self, body: &Body, gravity: Vec3) -> f64 {
        let x = &body.particles().x();
        let mut e = solver_core::figures::energy(body, gravity);
        for (s, &[i, j]) in self.pairs.iter().enumerate() {
            let l = (x[i as usize].xyz() - x[j as usize].xyz()).length();
            let stretch = (l - self.rest[s]) as f64;
            e += 0.5 * self.stiffness[s] as f64 * stretch * stretch;
        }
        e
    }

    /// Advances `body` by `dt` with the integrator; external forces in `body.particles().force()`
    /// act during the step and are cleared after it. A non-finite result restores the body and
    /// returns [`WobbleError::Diverged`].
    pub fn step(&mut self, body: &mut Body, dt: f32, gravity: Vec3) -> Result<()> {
        check_dt(dt)?;
        check_finite("gravity", 0, gravity.x + gravity.y + gravity.z)?;
        for (k, c) in body.colliders().iter().enumerate() {
            c.validate(k)?;
        }
        for (s, &[i, j]) in self.pairs.iter().enumerate() {
            if i as usize >= body.len() || j as usize >= body.len() {
                return Err(WobbleError::IndexOutOfRange {
                    what: "spring",
                    index: s,
                    value: i.max(j) as u64,
                    len: body.len(),
                });
            }
        }
        let n = body.len();
        self.ensure_scratch(n);
        let h = dt;
        // What the integrator reads of the body besides its particles: the attachments'
        // targets and the colliders.
        let targets: Vec<(usize, Vec3)> = body
            .attachments()
            .iter()
            .map(|a| (a.particle as usize, a.to))
            .collect();
        let colliders = body.colliders().to_vec();
        body.complete_attachments();
        let p = body.particles_mut().slices_mut();
        self.backup_x.copy_from_slice(p.x);
        self.backup_v.copy_from_slice(p.v);
        let Self {
            pairs,
            rest,
            stiffness,
            damping,
            integrator,
            acc,
            vel,
            stage_x,
            stage_v,
            ..
        } = self;
        let accel = |x: &[Packed4], v: &[Packed4], out: &mut [Vec3]| {
            Self::accelerations(
                pairs, rest, stiffness, *damping, x, v, p.force, gravity, out,
            )
        };
        let add = |q: &mut Packed4, d: Vec3| {
            q.x += d.x;
            q.y += d.y;
            q.z += d.z;
        };
        match integrator {
            Integrator::ExplicitEuler => {
                accel(p.x, p.v, &mut acc[0]);
                for ((xi, vi), &ai) in p.x.iter_mut().zip(p.v.iter_mut()).zip(&acc[0]) {
                    let v = vi.xyz();
                    add(xi, v * h);
                    add(vi, ai * h);
                }
            }
            Integrator::SemiImplicitEuler => {
                accel(p.x, p.v, &mut acc[0]);
                for ((xi, vi), &ai) in p.x.iter_mut().zip(p.v.iter_mut()).zip(&acc[0]) {
                    add(vi, ai * h);
                    let v = vi.xyz();
                    add(xi, v * h);
                }
            }
            Integrator::Verlet => {
                accel(p.x, p.v, &mut acc[0]);
                stage_v.copy_from_slice(p.v);
                for i in 0..n {
                    let v = p.v[i].xyz();
                    add(&mut p.x[i], v * h + acc[0][i] * (0.5 * h * h));
                    add(&mut stage_v[i], acc[0][i] * h);
                }
                accel(p.x, stage_v, &mut acc[1]);
                for ((vi, &a0), &a1) in p.v.iter_mut().zip(&acc[0]).zip(&acc[1]) {
                    add(vi, (a0 + a1) * (0.5 * h));
                }
            }
            Integrator::Rk4 => {
                // Stage s: velocity vel[s] and acceleration acc[s] at x + c_s h vel[s-1], ...
                for (i, v) in p.v.iter().enumerate() {
                    vel[0][i] = v.xyz();
                }
                accel(p.x, p.v, &mut acc[0]);
                for (s, c) in [(1usize, 0.5f32), (2, 0.5), (3, 1.0)] {
                    for i in 0..n {
                        let mut xs = p.x[i];
                        add(&mut xs, vel[s - 1][i] * (c * h));
                        stage_x[i] = xs;
                        let mut vs = p.v[i];
                        add(&mut vs, acc[s - 1][i] * (c * h));
                        stage_v[i] = vs;
                        vel[s][i] = vs.xyz();
                    }
                    accel(stage_x, stage_v, &mut acc[s]);
                }
                for i in 0..n {
                    let dx =
                        (vel[0][i] + 2.0 * vel[1][i] + 2.0 * vel[2][i] + vel[3][i]) * (h / 6.0);
                    let dv =
                        (acc[0][i] + 2.0 * acc[1][i] + 2.0 * acc[2][i] + acc[3][i]) * (h / 6.0);
                    add(&mut p.x[i], dx);
                    add(&mut p.v[i], dv);
                }
            }
        }
        for i in 0..n {
            if p.x[i].w == 0.0 {
                p.x[i] = self.backup_x[i];
                p.v[i] = Packed4::default();
            }
        }
        for &(i, to) in &targets {
            p.x[i].set_xyz(to);
        }
        for c in &colliders {
            for i in 0..n {
                if p.x[i].w == 0.0 {
                    continue;
                }
                let (d, nrm) = c.shape.signed_distance(p.x[i].xyz());
                if d >= 0.0 {
                    continue;
                }
                let out = p.x[i].xyz() - nrm * d;
                p.x[i].set_xyz(out);
                let v = p.v[i].xyz();
                let vn = v.dot(nrm);
                if vn < 0.0 {
                    let vt = v - nrm * vn;
                    let t = vt.length();
                    let keep = if t > 0.0 {
                        (1.0 - c.friction * -vn / t).max(0.0)
                    } else {
                        0.0
                    };
                    p.v[i].set_xyz(vt * keep);
                }
            }
        }
        p.x_prev.copy_from_slice(&self.backup_x);
        p.force.iter_mut().for_each(|f| *f = Packed4::default());
        if let Some(bad) =
            p.x.iter()
                .zip(p.v.iter())
                .position(|(x, v)| !(x.is_finite() && v.is_finite()))
        {
            p.x.copy_from_slice(&self.backup_x);
            p.x_prev.copy_from_slice(&self.backup_x);
            p.v.copy_from_slice(&self.backup_v);
            return Err(WobbleError::Diverged {
                particle: bad,
                stage: format!("mass-spring {}", self.integrator.name()),
                speed: None,
            });
        }
        Ok(())
    }
}

/// Smallest stiffness the search tries (N/m).
pub const MIN_SEARCH_STIFFNESS: f32 = 1e-3;
/// Largest stiffness the search tries (N/m).
pub const MAX_SEARCH_STIFFNESS: f32 = 1e9;

/// True when `steps` steps of `dt` from the body's state with every spring at stiffness `k`
/// stay finite with energy bounded (see the module's theory).
pub fn is_stable(
    body: &Body,
    integrator: Integrator,
    k: f32,
    dt: f32,
    damping: f32,
    steps: usize,
) -> Result<bool> {
    let gravity = Vec3::new(0.0, -9.81, 0.0);
    let mut b = body.clone();
    let mut ms = MassSpring::from_body(&b, SpringParams::uniform(k, damping), integrator)?;
    let (lo, hi) = b.particles().x().iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p.xyz()), hi.max(p.xyz())),
    );
    let free_mass: f64 = b.particles().mass().iter().map(|&m| m as f64).sum();
    let allowance = free_mass * gravity.length() as f64 * ((hi - lo).length() as f64).max(0.01);
    let e0 = ms.energy(&b, gravity);
    for _ in 0..steps {
        match ms.step(&mut b, dt, gravity) {
            Ok(()) => {}
            Err(WobbleError::Diverged { .. }) => return Ok(false),
            Err(e) => return Err(e),
        }
        let e = ms.energy(&b, gravity);
        if !e.is_finite() || e > e0 + allowance {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The largest spring stiffness (N/m, within [`MIN_SEARCH_STIFFNESS`]..=
/// [`MAX_SEARCH_STIFFNESS`], to about 1%) at which `integrator` stays stable for `steps` steps
/// of `dt` on `body` with spring damping `damping`; 0 when even the smallest is unstable.
pub fn largest_stable_stiffness(
    body: &Body,
    integrator: Integrator,
    dt: f32,
    damping: f32,
    steps: usize,
) -> Result<f32> {
    check_dt(dt)?;
    solver_core::error::check_count("stability steps", steps, 1_000_000)?;
    SpringParams::uniform(1.0, damping).validate()?;
    body.validate()?;
    let stable = |k: f32| is_stable(body, integrator, k, dt, damping, steps);
    let mut lo = MIN_SEARCH_STIFFNESS;
    if !stable(lo)? {
        return Ok(0.0);
    }
    let mut hi = lo * 4.0;
    while stable(hi)? {
        lo = hi;
        if lo >= MAX_SEARCH_STIFFNESS {
            return Ok(MAX_SEARCH_STIFFNESS);
        }
        hi = (lo * 4.0).min(MAX_SEARCH_STIFFNESS);
    }
    // Bisection of [lo, hi] in log space down to a ratio of 1.01.
    while hi / lo > 1.01 {
        let mid = (lo * hi).sqrt();
        if stable(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}
