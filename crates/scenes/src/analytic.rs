//! Bodies and measurements with answers known in closed form, shared by the analytic tests
//! (tests/chain_static_stretch.rs and its siblings) and the harness's claims C13 and C14, so
//! that both run the very same code: the hanging chain's static stretch and a free cloth's
//! momentum.
//!
//! Theory. The hanging chain: at rest (v = 0) the prediction is `x̃ = x + h² g`; a converged
//! XPBD solve gives `x - x̃ = M⁻¹ ∇Cᵀ λ` and `C = -α̃ λ` (α̃ = α/h²), and `x` unchanged makes
//! `∇Cᵀ λ / h² = -M g`: the constraint forces hold the weights, and each segment stretches by
//! `C = α · force = α (particles below) m g`, whatever h and the iteration count. The free
//! cloth: a constraint's corrections `δ_p = w_p ∇_p C Δλ` carry impulses `m_p δ_p = ∇_p C Δλ`
//! that sum to zero for an internal constraint (translation invariance: `Σ_p ∇_p C = 0`), so
//! the total momentum `Σ m v` is unchanged but for f32 rounding.

use crate::standard as scenes;
use glam::Vec3;
use solver_core::error::Result;
use solver_core::{step, Body, Solver, StepParams};

/// Particles of the hanging chain (`scenes::rope`, 0.1 kg each, the first pinned).
pub const CHAIN_N: usize = 10;
/// XPBD compliance of every segment of the chain (m/N).
pub const CHAIN_ALPHA: f32 = 1e-2;
/// Damping of the chain's settling (1/s).
pub const CHAIN_DAMPING: f32 = 5.0;
/// Seconds the chain settles for.
pub const CHAIN_SECONDS: f32 = 6.0;

/// The hanging chain after settling, against its closed form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainFigures {
    /// Worst relative error of the nine segments' stretch against `α (N - 1 - k) m g`.
    pub worst: f64,
    /// The top segment's stretch (m).
    pub top: f64,
    /// Its closed form (m).
    pub top_exact: f64,
}

/// Hangs the chain (`CHAIN_N` particles, compliance `CHAIN_ALPHA`), released horizontally, for
/// `CHAIN_SECONDS` with `solver` and `params` (whose damping is used as given), and compares each
/// segment's stretch with `α (particles below) m g` (see the module doc).
pub fn hanging_chain(solver: &mut dyn Solver, params: &StepParams) -> Result<ChainFigures> {
    let mut body = scenes::rope(CHAIN_N)?;
    body.constraints_mut()
        .distance
        .compliance
        .iter_mut()
        .for_each(|c| *c = CHAIN_ALPHA);
    let steps = (CHAIN_SECONDS / params.dt).round() as usize;
    for _ in 0..steps {
        step(&mut body, params, solver, None)?;
    }
    let d = &body.constraints().distance;
    let x = &body.particles().x();
    let m = body.particles().mass()[1] as f64;
    let g = params.gravity.length() as f64;
    let mut f = ChainFigures {
        worst: 0.0,
        top: f64::NAN,
        top_exact: f64::NAN,
    };
    for (k, (&[i, j], &rest)) in d.pairs.iter().zip(&d.rest).enumerate() {
        let stretch = (x[i as usize].xyz() - x[j as usize].xyz()).length() as f64 - rest as f64;
        let exact = CHAIN_ALPHA as f64 * (CHAIN_N - 1 - k) as f64 * m * g;
        f.worst = f.worst.max((stretch - exact).abs() / exact);
        if k == 0 {
            (f.top, f.top_exact) = (stretch, exact);
        }
    }
    Ok(f)
}

/// The reference cloth (`scenes::cloth(n)`) with its two pins released (every particle keeps
/// the scene's mass 1/n²).
pub fn free_cloth(n: usize) -> Result<Body> {
    let mut body = scenes::cloth(n)?;
    let m = 1.0 / (n * n) as f32;
    for i in [0, n - 1] {
        body.particles_mut().set_mass(i, m)?;
    }
    Ok(body)
}

/// Deterministic pseudo-random numbers in [-1, 1) (SplitMix64).
#[derive(Clone, Debug)]
pub struct Noise(u64);

impl Noise {
    /// A sequence from `seed`.
    pub fn new(seed: u64) -> Noise {
        Noise(seed)
    }

    /// The next number in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// A vector of three of them.
    pub fn next_vec3(&mut self) -> Vec3 {
        Vec3::new(self.next_f32(), self.next_f32(), self.next_f32())
    }
}

/// Total linear momentum `Σ m v` (f64).
pub fn momentum(body: &Body) -> [f64; 3] {
    let p = &body.particles();
    let mut s = [0.0f64; 3];
    for i in 0..p.len() {
        let (m, v) = (p.mass()[i] as f64, p.v()[i].xyz());
        s[0] += m * v.x as f64;
        s[1] += m * v.y as f64;
        s[2] += m * v.z as f64;
    }
    s
}

/// `|a - b| / |a|` of two 3-vectors.
pub fn relative_change(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    d / (a[0].powi(2) + a[1].powi(2) + a[2].powi(2)).sqrt()
}

/// Velocity of the free cloth's particles in [`cloth_momentum`]: each component uniform in
/// [-1, 1) m/s about this common velocity, so |p₀| ≈ 0.5 kg m/s stands clear of the f32
/// rounding floor of a few 1e-6 kg m/s.
pub const CLOTH_DRIFT: Vec3 = Vec3::new(0.5, 0.0, 0.0);

/// Steps of [`cloth_momentum`].
pub const CLOTH_STEPS: usize = 100;

/// The free `n` x `n` cloth, no gravity, with seeded random velocities about [`CLOTH_DRIFT`],
/// run [`CLOTH_STEPS`] steps of `params` (gravity replaced by zero): returns `|p - p₀| / |p₀|`.
pub fn cloth_momentum(solver: &mut dyn Solver, n: usize, params: &StepParams) -> Result<f64> {
    let mut body = free_cloth(n)?;
    let mut noise = Noise::new(16);
    for v in body.particles_mut().v_mut().iter_mut() {
        v.set_xyz(CLOTH_DRIFT + noise.next_vec3());
    }
    let p0 = momentum(&body);
    let params = StepParams {
        gravity: Vec3::ZERO,
        ..*params
    };
    for _ in 0..CLOTH_STEPS {
        step(&mut body, &params, solver, None)?;
    }
    Ok(relative_change(p0, momentum(&body)))
}
