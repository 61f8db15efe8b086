//! A solver written outside wobble's crates: damped Jacobi on the distance constraints.
use wobble::core::{constraints::project_distance_pair, Constraints, Result, SolveState};
use wobble::{figures, glam::Vec3, step, Cloth, Solver, StepParams};

struct DampedJacobi(Option<u64>, Vec<Vec3>);
impl Solver for DampedJacobi {
    fn name(&self) -> String {
        "damped-jacobi".into()
    }
    fn prepare(&mut self, _: &Constraints, particles: usize, topology: u64) -> Result<()> {
        Ok((self.0, self.1) = (Some(topology), vec![Vec3::ZERO; particles]))
    }
    fn prepared_for(&self) -> Option<u64> {
        self.0
    }
    fn iterate(&mut self, s: &mut SolveState, _: usize) {
        let d = &s.constraints.distance;
        for (c, &[i, j]) in d.pairs.iter().enumerate() {
            let (i, j, alpha) = (i as usize, j as usize, s.alpha_tilde(d.compliance[c]));
            let (mut a, mut b) = (s.x[i], s.x[j]); // every constraint reads the same positions
            project_distance_pair(&mut a, &mut b, d.rest[c], alpha, &mut s.lambda[c], 0.5);
            self.1[i] += a.xyz() - s.x[i].xyz();
            self.1[j] += b.xyz() - s.x[j].xyz();
        }
        for (x, dx) in s.x.iter_mut().zip(&mut self.1) {
            x.set_xyz(x.xyz() + s.stiffness * std::mem::take(dx));
        }
    }
}

fn main() -> Result<()> {
    let mut cloth = Cloth::new().at(Vec3::Y).pin_corners().build()?;
    let mut solver = DampedJacobi(None, vec![]);
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
