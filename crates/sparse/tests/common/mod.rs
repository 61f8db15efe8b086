//! Shared test helpers: extra constraint kinds of arity 1, 3 and 4, predicted states, solves.
#![allow(dead_code)]

use solver_core::constraints::MAX_ARITY;
use solver_core::glam::Vec3;
use solver_core::{
    figures, step, Body, ConstraintKind, GaussSeidel, Packed4, SolveState, Solver, StepParams,
};

/// Triangle area constraints `C = area - rest` (arity 3).
#[derive(Clone, Debug, Default)]
pub struct TriangleArea {
    pub tris: Vec<[u32; 3]>,
    pub rest: Vec<f32>,
}

fn area_and_grad(x: &[Packed4], t: [u32; 3], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
    let [a, b, c] = t.map(|p| x[p as usize].xyz());
    let n = (b - a).cross(c - a);
    let len = n.length();
    if len == 0.0 {
        grad.iter_mut().for_each(|g| *g = Vec3::ZERO);
        return 0.0;
    }
    let nh = n / len;
    grad[1] = 0.5 * (c - a).cross(nh);
    grad[2] = 0.5 * nh.cross(b - a);
    grad[0] = -grad[1] - grad[2];
    0.5 * len
}

impl TriangleArea {
    /// One constraint per triangle, rest area from `x`.
    pub fn new(tris: &[[u32; 3]], x: &[Packed4]) -> Self {
        let mut g = [Vec3::ZERO; MAX_ARITY];
        TriangleArea {
            tris: tris.to_vec(),
            rest: tris.iter().map(|&t| area_and_grad(x, t, &mut g)).collect(),
        }
    }
}

/// The [`ConstraintKind`] methods of a rigid table (compliance 0) named `$name` whose
/// constraints are the fixed-size particle tuples of its field `$tuples`: `name`, `len`,
/// `particles`, `compliance` and `particle_indices_mut` (as solver-core's kinds have theirs).
macro_rules! rigid_table_accessors {
    ($name:literal, $tuples:ident) => {
        fn name(&self) -> &'static str {
            $name
        }
        fn len(&self) -> usize {
            self.$tuples.len()
        }
        fn particles(&self, c: usize) -> &[u32] {
            &self.$tuples[c]
        }
        fn compliance(&self, _c: usize) -> f32 {
            0.0
        }
        fn particle_indices_mut(&mut self) -> &mut [u32] {
            self.$tuples.as_flattened_mut()
        }
    };
}

impl ConstraintKind for TriangleArea {
    rigid_table_accessors!("test-area", tris);
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        area_and_grad(x, self.tris[c], grad) - self.rest[c]
    }
    fn scale(&self) -> f32 {
        self.rest.iter().sum::<f32>() / self.rest.len().max(1) as f32
    }
}

/// A floor `y >= height` for some particles (arity 1, unilateral: `C = height - y`).
#[derive(Clone, Debug, Default)]
pub struct Floor {
    pub ids: Vec<[u32; 1]>,
    pub height: f32,
}

impl ConstraintKind for Floor {
    rigid_table_accessors!("test-floor", ids);
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        grad[0] = Vec3::new(0.0, -1.0, 0.0);
        self.height - x[self.ids[c][0] as usize].y
    }
    fn scale(&self) -> f32 {
        1.0
    }
    fn unilateral(&self) -> bool {
        true
    }
}

/// Any particles, any arity 1..=4, `C = 0` everywhere: for coloring tests.
#[derive(Clone, Debug, Default)]
pub struct Tuples {
    /// Every tuple's particles, one after another.
    flat: Vec<u32>,
    /// Where each tuple starts in `flat`, plus the end.
    starts: Vec<usize>,
}

impl Tuples {
    pub fn new(ids: Vec<Vec<u32>>) -> Self {
        let mut starts = vec![0];
        starts.extend(ids.iter().scan(0, |end, t| {
            *end += t.len();
            Some(*end)
        }));
        Tuples {
            flat: ids.concat(),
            starts,
        }
    }
}

impl ConstraintKind for Tuples {
    fn name(&self) -> &'static str {
        "test-tuples"
    }
    fn len(&self) -> usize {
        self.starts.len() - 1
    }
    fn particles(&self, c: usize) -> &[u32] {
        &self.flat[self.starts[c]..self.starts[c + 1]]
    }
    fn compliance(&self, _c: usize) -> f32 {
        0.0
    }
    fn evaluate(&self, _c: usize, _x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        grad.iter_mut().for_each(|g| *g = Vec3::ZERO);
        0.0
    }
    fn scale(&self) -> f32 {
        1.0
    }
    fn particle_indices_mut(&mut self) -> &mut [u32] {
        &mut self.flat
    }
}

/// The cloth with one area constraint per triangle (arity 3) and a floor just below the
/// rest height for every fourth particle (arity 1, unilateral), after the distance table.
pub fn cloth_with_extra_kinds(n: usize) -> Body {
    let mut body = scenes::cloth(n).unwrap();
    let area = TriangleArea::new(&body.topology().triangles, &body.particles().x());
    body.constraints_mut().push_kind(Box::new(area));
    let floor = Floor {
        ids: (0..body.len() as u32).step_by(4).map(|p| [p]).collect(),
        height: 0.99,
    };
    body.constraints_mut().push_kind(Box::new(floor));
    body.topology_changed();
    body
}

/// `steps` steps of storage-order Gauss-Seidel with the default parameters, then the prediction
/// of the next substep (x_prev = x, v += h g, x += h v for free particles): the state a solver
/// starts from.
pub fn predicted(mut body: Body, steps: usize) -> Body {
    let params = StepParams::default();
    let mut gs = GaussSeidel::new();
    for _ in 0..steps {
        step(&mut body, &params, &mut gs, None).unwrap();
    }
    let h = params.dt;
    let p = body.particles_mut();
    for i in 0..p.len() {
        p.x_prev_mut()[i] = p.x_mut()[i];
        if p.x()[i].w == 0.0 {
            continue;
        }
        p.v_mut()[i].y += h * params.gravity.y;
        p.x_mut()[i].x += h * p.v_mut()[i].x;
        p.x_mut()[i].y += h * p.v_mut()[i].y;
        p.x_mut()[i].z += h * p.v_mut()[i].z;
    }
    body
}

/// Runs `iterations` solver iterations on a copy of `body` (XPBD, dt = 1/60) and returns the
/// residual before the first and after every iteration, and the final positions.
pub fn solve(body: &Body, solver: &mut dyn Solver, iterations: usize) -> (Vec<f32>, Vec<Packed4>) {
    let (r, x, _) = solve_with_multipliers(body, solver, iterations);
    (r, x)
}

/// [`solve`], also returning the multipliers (global numbering) after the last iteration.
pub fn solve_with_multipliers(
    body: &Body,
    solver: &mut dyn Solver,
    iterations: usize,
) -> (Vec<f32>, Vec<Packed4>, Vec<f32>) {
    on_a_copy(body, solver, iterations, |solver, s| {
        let mut r = vec![figures::residual(s.constraints, s.x)];
        solver.begin(s);
        for it in 0..iterations {
            solver.iterate(s, it);
            r.push(figures::residual(s.constraints, s.x));
        }
        r
    })
}

/// `begin` and `iterate_all` (the step loop's call when nothing runs between iterations) on a
/// copy of `body`, from the same state as [`solve_with_multipliers`]: the final positions and
/// multipliers.
pub fn solve_all_at_once(
    body: &Body,
    solver: &mut dyn Solver,
    iterations: usize,
) -> (Vec<Packed4>, Vec<f32>) {
    let ((), x, lambda) = on_a_copy(body, solver, iterations, |solver, s| {
        solver.begin(s);
        solver.iterate_all(s);
    });
    (x, lambda)
}

/// Runs `solve` on a copy of `body`, with `solver` prepared for it and a zeroed multiplier per
/// constraint (XPBD, dt = 1/60); returns what it returned and the copy's positions and
/// multipliers.
pub fn on_a_copy<R>(
    body: &Body,
    solver: &mut dyn Solver,
    iterations: usize,
    solve: impl FnOnce(&mut dyn Solver, &mut SolveState) -> R,
) -> (R, Vec<Packed4>, Vec<f32>) {
    let mut b = body.clone();
    let constraints = b.constraints().clone();
    solver_core::prepare_solver(solver, &constraints, b.len(), b.topology_id()).unwrap();
    let mut lambda = vec![0.0; b.constraints().len()];
    let dt = StepParams::default().dt;
    let slices = b.particles_mut().slices_mut();
    let mut s = SolveState {
        x: slices.x,
        x_prev: slices.x_prev,
        constraints: &constraints,
        lambda: &mut lambda,
        inv_dt2: 1.0 / (dt * dt),
        stiffness: 1.0,
        iterations,
        keep_multipliers: true,
    };
    let out = solve(solver, &mut s);
    (out, b.particles().x().to_vec(), lambda)
}

/// The largest coordinate difference between two position sets (NaN ignored, as `f32::max`
/// does).
pub fn max_abs_diff(a: &[Packed4], b: &[Packed4]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p.xyz() - q.xyz()).abs().max_element())
        .fold(0.0f32, f32::max)
}
