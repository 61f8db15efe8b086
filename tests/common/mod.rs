//! Shared helpers of the analytic tests (tests/chain_static_stretch.rs and its siblings): the
//! solver configurations every check runs, small bodies with known closed-form behaviour, and a
//! table that prints every configuration's figure before it asserts, so that a failing run still
//! shows the figures of all of them. Also the ray hit the game-API tests grab a cloth by.
#![allow(dead_code)]

use solver_core::glam::Vec3;
use solver_core::interaction::picking::Hit;
use solver_core::{step, Body, DistanceConstraints, Particles, StepParams, WobbleError};
use solver_core::{Constraints, Solver, Topology};
use sparse::{SolverKind, SolverOptions};

/// A ray hit on `triangle` of `body` at `barycentric`, its point at the triangle's first corner:
/// what a game's pick hands `grab`.
pub fn hit_on(body: &Body, triangle: u32, barycentric: [f32; 3]) -> Hit {
    let corners = body.topology().triangles[triangle as usize];
    Hit {
        triangle,
        corners,
        barycentric,
        distance: 1.0,
        point: body.particles().position(corners[0] as usize),
    }
}

/// One solver configuration under test.
pub struct Config {
    /// What the table prints.
    pub label: String,
    /// The solver.
    pub solver: SolverKind,
    /// Its options.
    pub options: SolverOptions,
}

impl Config {
    /// A fresh solver of this configuration.
    pub fn solver(&self) -> Box<dyn Solver> {
        self.solver
            .build(&self.options)
            .unwrap_or_else(|e| panic!("{}: {e}", self.label))
    }
}

/// Every solver in its default configuration, then the configurations the harness adds: its
/// parallel solvers on two threads. These bodies are far below the default parallel threshold,
/// so the threaded configurations lower it and the work block to the smallest allowed, which
/// makes the two threads really split every pass.
pub fn configs() -> Vec<Config> {
    let mut v: Vec<Config> = SolverKind::ALL
        .into_iter()
        .map(|solver| Config {
            label: solver.to_string(),
            solver,
            options: SolverOptions::default(),
        })
        .collect();
    let threaded: &[SolverKind] = if sparse::PARALLEL {
        &[
            SolverKind::Colored(sparse::ColoredOptions::DEFAULT),
            SolverKind::Jacobi(sparse::JacobiOptions::DEFAULT),
            SolverKind::Chebyshev(sparse::ChebyshevOptions::DEFAULT),
        ]
    } else {
        eprintln!("skipped the two-thread configurations: built without the `parallel` feature");
        &[]
    };
    for &solver in threaded {
        v.push(Config {
            label: format!("{solver} threads=2"),
            solver,
            options: SolverOptions {
                threads: 2,
                chunk: 16,
                parallel_threshold: 1,
                ..Default::default()
            },
        });
    }
    v
}

/// Steps `body` `steps` times.
pub fn run(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    steps: usize,
) -> Result<(), WobbleError> {
    for _ in 0..steps {
        step(body, params, solver, None)?;
    }
    Ok(())
}

/// A check's figures, one row per configuration, against a limit.
pub struct Table {
    title: String,
    limit: f64,
    rows: Vec<(String, Result<f64, String>)>,
}

impl Table {
    /// A table whose figures must be at most `limit`.
    pub fn new(title: &str, limit: f64) -> Table {
        Table {
            title: title.into(),
            limit,
            rows: Vec::new(),
        }
    }

    /// Records one configuration's figure (or why it has none, e.g. an error from `step`).
    pub fn row(&mut self, label: &str, figure: Result<f64, String>) {
        self.rows.push((label.into(), figure));
    }

    /// Prints every row; returns the rows above the limit, NaN or in error.
    pub fn print(self) -> Vec<String> {
        println!("{} (limit {:.3e}):", self.title, self.limit);
        let mut bad = Vec::new();
        for (label, figure) in &self.rows {
            let (text, ok) = match figure {
                Ok(f) => (format!("{f:.4e}"), *f <= self.limit),
                Err(e) => (format!("error: {e}"), false),
            };
            println!("  {label:<20} {text}{}", if ok { "" } else { "  FAIL" });
            if !ok {
                bad.push(format!("{}: {label}: {text}", self.title));
            }
        }
        bad
    }

    /// Prints every row, then fails listing the rows above the limit, NaN or in error.
    pub fn check(self) {
        assert_all_within(self.print());
    }
}

/// Fails listing `bad` (the rows of [`Table::print`]) unless it is empty.
pub fn assert_all_within(bad: Vec<String>) {
    assert!(bad.is_empty(), "above the limit: {}", bad.join("; "));
}

/// One table per case: `table(case)` gives its title and limit, `figure(config, case)` each
/// configuration's figure; prints them all, then fails on any row over its limit.
pub fn check_cases<K: Copy>(
    cases: &[K],
    table: impl Fn(K) -> (String, f64),
    figure: impl Fn(&Config, K) -> Result<f64, String>,
) {
    let mut bad = Vec::new();
    for &case in cases {
        let (title, limit) = table(case);
        let mut t = Table::new(&title, limit);
        for c in configs() {
            t.row(&c.label, figure(&c, case));
        }
        bad.extend(t.print());
    }
    assert_all_within(bad);
}

/// Steps `body` `steps` times with `params` and a fresh solver of `config`, recording the x
/// coordinate of `particle` before and after every step.
pub fn trace_x(
    config: &Config,
    body: &mut Body,
    params: &StepParams,
    steps: usize,
    particle: usize,
) -> Result<Vec<f64>, String> {
    let mut solver = config.solver();
    let mut f = Vec::with_capacity(steps + 1);
    f.push(body.particles().position(particle).x as f64);
    for _ in 0..steps {
        step(body, params, solver.as_mut(), None).map_err(|e| e.to_string())?;
        f.push(body.particles().position(particle).x as f64);
    }
    Ok(f)
}

/// Particles at `positions` with `masses` (infinite: pinned) joined by distance constraints
/// `pairs`, all with compliance `alpha` and their rest length from the positions.
pub fn spring_body(positions: &[Vec3], masses: &[f32], pairs: &[[u32; 2]], alpha: f32) -> Body {
    let particles = Particles::new(positions, masses).unwrap();
    let mut distance = DistanceConstraints::default();
    for &[i, j] in pairs {
        distance.push_rest(&particles.x(), i, j, alpha).unwrap();
    }
    let structural = distance.len();
    Body::new(
        particles,
        Constraints {
            distance,
            extra: Vec::new(),
        },
        Topology {
            structural,
            ..Default::default()
        },
    )
    .unwrap()
}

/// The moving particle of [`spring_mass`].
pub const MASS: usize = 1;

/// A particle of mass `m` at the origin (index [`MASS`]) on a spring of compliance `alpha` from
/// a pinned anchor at (-1, 0, 0), and with `anchors` = 2 on a second one from (1, 0, 0) too.
/// At the origin its position has the finest f32 resolution: a displacement of 1 mm about
/// x = 1 would carry rounding of 1e-4 of itself each step.
pub fn spring_mass(anchors: usize, m: f32, alpha: f32) -> Body {
    let (pos, mass, pairs): (Vec<Vec3>, Vec<f32>, Vec<[u32; 2]>) = if anchors == 1 {
        (
            vec![-Vec3::X, Vec3::ZERO],
            vec![f32::INFINITY, m],
            vec![[0, 1]],
        )
    } else {
        (
            vec![-Vec3::X, Vec3::ZERO, Vec3::X],
            vec![f32::INFINITY, m, f32::INFINITY],
            vec![[0, 1], [1, 2]],
        )
    };
    spring_body(&pos, &mass, &pairs, alpha)
}

#[allow(unused_imports)]
pub use scenes::analytic::{free_cloth, relative_change, Noise};

/// Angular momentum about the centre of mass, `Σ m (x - c) × (v - V)` (f64).
pub fn angular_momentum(body: &Body) -> [f64; 3] {
    let p = &body.particles();
    let mass: f64 = p.mass().iter().map(|&m| m as f64).sum();
    let (mut c, mut vc) = ([0.0f64; 3], [0.0f64; 3]);
    for i in 0..p.len() {
        let m = p.mass()[i] as f64;
        let (x, v) = (p.x()[i].xyz(), p.v()[i].xyz());
        for (k, (a, b)) in [(x.x, v.x), (x.y, v.y), (x.z, v.z)].into_iter().enumerate() {
            c[k] += m * a as f64 / mass;
            vc[k] += m * b as f64 / mass;
        }
    }
    let mut l = [0.0f64; 3];
    for i in 0..p.len() {
        let m = p.mass()[i] as f64;
        let (x, v) = (p.x()[i].xyz(), p.v()[i].xyz());
        let r = [x.x as f64 - c[0], x.y as f64 - c[1], x.z as f64 - c[2]];
        let u = [v.x as f64 - vc[0], v.y as f64 - vc[1], v.z as f64 - vc[2]];
        l[0] += m * (r[1] * u[2] - r[2] * u[1]);
        l[1] += m * (r[2] * u[0] - r[0] * u[2]);
        l[2] += m * (r[0] * u[1] - r[1] * u[0]);
    }
    l
}

/// Times at which `f` crosses zero upwards, linearly interpolated between samples `dt` apart.
pub fn upward_crossings(f: &[f64], dt: f64) -> Vec<f64> {
    let mut t = Vec::new();
    for k in 1..f.len() {
        if f[k - 1] < 0.0 && f[k] >= 0.0 {
            let s = f[k - 1] / (f[k - 1] - f[k]);
            t.push((k as f64 - 1.0 + s) * dt);
        }
    }
    t
}

/// The mean period between the first and the last upward crossing of `f` (`None` with fewer
/// than two crossings).
pub fn period(f: &[f64], dt: f64) -> Option<f64> {
    let t = upward_crossings(f, dt);
    (t.len() >= 2).then(|| (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64)
}

/// How deep the deepest particle of a rapier-coupled body is inside collider `handle`, in the
/// body frame (0 when none is inside); the tests that use it keep the body at the world's origin.
#[cfg(feature = "rapier")]
pub fn deepest_inside(
    coupling: &wobble::RapierCoupling,
    handle: wobble::rapier3d::prelude::ColliderHandle,
) -> f32 {
    let collider = &coupling.rapier().colliders[handle];
    let body = coupling.body();
    (0..body.len())
        .map(|i| body.world_position(i).as_vec3())
        .map(|p| {
            let point = wobble::rapier3d::prelude::Vector::new(p.x, p.y, p.z);
            let hit = collider
                .shape()
                .project_point(collider.position(), point, false);
            if hit.is_inside {
                (hit.point - point).length()
            } else {
                0.0
            }
        })
        .fold(0.0, f32::max)
}
