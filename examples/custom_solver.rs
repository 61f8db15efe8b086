//! A solver written outside wobble's crates: damped Jacobi on the distance constraints.
use wobble::core::{constraints::project_distance_pair, Result, SolveState};
use wobble::{figures, glam::Vec3, step, Cloth, Solver, StepParams};

struct DampedJacobi(Vec<Vec3>);
impl Solver for DampedJacobi {
    fn name(&self) -> &'static str {
        "damped-jacobi"
    }
    fn iterate(&mut self, s: &mut SolveState, _: usize) {
        let d = &s.constraints.distance;
        self.0.resize(s.x.len(), Vec3::ZERO);
        for (c, &[i, j]) in d.pairs.iter().enumerate() {
            let (i, j, alpha) = (i as usize, j as usize, s.alpha_tilde(d.compliance[c]));
            let (mut a, mut b) = (s.x[i], s.x[j]); // every constraint reads the same positions
            project_distance_pair(&mut a, &mut b, d.rest[c], alpha, &mut s.lambda[c], 0.5);
            self.0[i] += a.xyz() - s.x[i].xyz();
            self.0[j] += b.xyz() - s.x[j].xyz();
        }
        for (x, dx) in s.x.iter_mut().zip(&mut self.0) {
            x.set_xyz(x.xyz() + s.stiffness * std::mem::take(dx));
        }
    }
}

fn main() -> Result<()> {
    let mut cloth = Cloth::new().at(Vec3::Y).pin_corners().build()?;
    let mut solver = DampedJacobi(vec![]);
    for _ in 0..120 {
        step(&mut cloth, &StepParams::default(), &mut solver, None)?;
    }
    let stretch = figures::stretch(&cloth).0;
    println!(
        "cloth, 120 steps: mean stretch {} {stretch:.4}",
        solver.name()
    );
    Ok(())
}
