//! The mesh deformer: the Unity "jelly" effect, where every vertex springs back to its rest
//! position and forces at a point push nearby vertices more than far ones.
//!
//! Theory (Catlike Coding's "Mesh Deformation" tutorial, the effect Unity users know). Each
//! vertex i is a unit-mass particle on a spring of stiffness `k` to its rest position `r_i`,
//! with damping `c`; a force `F` at point `p` along direction `u` (or radially away from `p`)
//! reaches it attenuated by a falloff of its distance `d = |x_i - p|`:
//!
//! ```text
//! f_i = F falloff(d) u,   falloff = 1 / (ε + d²)  (ε = 0.1; the tutorial's is 1 / (1 + d²)),
//!                                   exp(-d²/R²)  or  max(0, 1 - d/R)
//! v_i ← (v_i + h (f_i - k (x_i - r_i))) (1 - c h);   x_i ← x_i + h v_i
//! ```
//!
//! (semi-implicit Euler, stable for `h √k < 2`; larger steps are refused). A vertex whose
//! displacement and velocity fall below 1e-10 (m, m/s) is put exactly at rest, which keeps
//! the decay out of slow subnormal floats. Vertices are
//! independent, so the update runs in parallel over chunks; the parallel path gives bit-for-bit
//! the serial result (each vertex's arithmetic is the same).

use crate::error::check_non_negative;
use crate::error::{check_dt, check_finite, Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::par::*;
use glam::Vec3;

/// Vertices per parallel work item.
const CHUNK: usize = 4096;

/// How a force weakens with distance d from its point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Falloff {
    /// `1 / (epsilon + d²)` (the Unity tutorial's shape; epsilon = 0.1 by default).
    InverseSquare {
        /// Softening ε (> 0), which bounds the force at the point itself to F/ε.
        epsilon: f32,
    },
    /// `exp(-d² / radius²)`.
    Gaussian {
        /// Radius R (> 0).
        radius: f32,
    },
    /// `max(0, 1 - d / radius)`.
    Linear {
        /// Radius R (> 0) beyond which nothing moves.
        radius: f32,
    },
}

impl Default for Falloff {
    fn default() -> Self {
        Falloff::InverseSquare { epsilon: 0.1 }
    }
}

impl Falloff {
    fn validate(&self) -> Result<()> {
        let v = match *self {
            Falloff::InverseSquare { epsilon } => epsilon,
            Falloff::Gaussian { radius } | Falloff::Linear { radius } => radius,
        };
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(WobbleError::BadParameter {
                name: "falloff parameter",
                value: v as f64,
                reason: "must be finite and > 0",
            })
        }
    }

    /// The attenuation at squared distance `d2`.
    #[inline(always)]
    pub fn at(&self, d2: f32) -> f32 {
        match *self {
            Falloff::InverseSquare { epsilon } => 1.0 / (epsilon + d2),
            Falloff::Gaussian { radius } => (-d2 / (radius * radius)).exp(),
            Falloff::Linear { radius } => (1.0 - d2.sqrt() / radius).max(0.0),
        }
    }
}

/// Where a force pushes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Push {
    /// Along a fixed direction (normalised by the deformer).
    Along(Vec3),
    /// Away from the force point (the tutorial's behaviour; a negative force pulls).
    Radial,
}

/// A spring-back deformer over the vertices of any mesh.
#[derive(Clone, Debug)]
pub struct Deformer {
    /// Rest positions.
    pub rest: Vec<Packed4>,
    /// Current (displaced) positions.
    pub position: Vec<Packed4>,
    /// Velocities.
    pub velocity: Vec<Packed4>,
    /// Forces (per unit mass) gathered for the next update.
    pub force: Vec<Packed4>,
    /// Spring stiffness k (1/s²).
    pub spring: f32,
    /// Damping c (1/s).
    pub damping: f32,
    /// The falloff of forces.
    pub falloff: Falloff,
}

impl Deformer {
    /// A deformer at rest over `rest` positions.
    pub fn new(rest: &[Vec3], spring: f32, damping: f32, falloff: Falloff) -> Result<Self> {
        if rest.is_empty() {
            return Err(WobbleError::EmptyMesh("deformer mesh".into()));
        }
        for (k, p) in rest.iter().enumerate() {
            check_finite("vertex", k, p.x + p.y + p.z)?;
        }
        for (name, v) in [("spring", spring), ("damping", damping)] {
            check_non_negative(name, v)?;
        }
        falloff.validate()?;
        let packed: Vec<Packed4> = rest.iter().map(|&p| Packed4::new(p, 1.0)).collect();
        Ok(Deformer {
            position: packed.clone(),
            rest: packed,
            velocity: vec![Packed4::default(); rest.len()],
            force: vec![Packed4::default(); rest.len()],
            spring,
            damping,
            falloff,
        })
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    /// True when there is no vertex (never, once built).
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn check_force(&self, point: Vec3, push: Push, force: f32) -> Result<Vec3> {
        check_finite("force point", 0, point.x + point.y + point.z)?;
        check_finite("force", 0, force)?;
        match push {
            Push::Radial => Ok(Vec3::ZERO),
            Push::Along(u) => {
                let len = u.length();
                if len.is_finite() && len > 0.0 {
                    Ok(u / len)
                } else {
                    Err(WobbleError::BadParameter {
                        name: "force direction",
                        value: len as f64,
                        reason: "must have a finite, non-zero length",
                    })
                }
            }
        }
    }

    /// Adds a force of magnitude `force` at `point`, attenuated by the falloff, for the next
    /// update (serial).
    pub fn add_force(&mut self, point: Vec3, push: Push, force: f32) -> Result<()> {
        let u = self.check_force(point, push, force)?;
        let falloff = self.falloff;
        for (f, x) in self.force.iter_mut().zip(&self.position) {
            push_one(f, x, point, u, force, falloff);
        }
        Ok(())
    }

    /// [`Deformer::add_force`] over vertex chunks in parallel (same result, bit for bit).
    pub fn add_force_parallel(&mut self, point: Vec3, push: Push, force: f32) -> Result<()> {
        let u = self.check_force(point, push, force)?;
        let falloff = self.falloff;
        self.force
            .par_chunks_mut(CHUNK)
            .zip(self.position.par_chunks(CHUNK))
            .for_each(|(fs, xs)| {
                for (f, x) in fs.iter_mut().zip(xs) {
                    push_one(f, x, point, u, force, falloff);
                }
            });
        Ok(())
    }

    fn check_dt(&self, dt: f32) -> Result<()> {
        check_dt(dt)?;
        if dt * self.spring.sqrt() >= 2.0 {
            return Err(WobbleError::BadParameter {
                name: "deformer time step",
                value: dt as f64,
                reason: "semi-implicit Euler needs dt √spring < 2",
            });
        }
        Ok(())
    }

    /// Advances every vertex by `dt` (serial) and clears the gathered forces.
    pub fn update(&mut self, dt: f32) -> Result<()> {
        self.check_dt(dt)?;
        let (k, damp) = (self.spring, (1.0 - self.damping * dt).max(0.0));
        for i in 0..self.len() {
            advance(
                &mut self.position[i],
                &mut self.velocity[i],
                &mut self.force[i],
                &self.rest[i],
                k,
                damp,
                dt,
            );
        }
        Ok(())
    }

    /// [`Deformer::update`] over vertex chunks in parallel (same result, bit for bit).
    pub fn update_parallel(&mut self, dt: f32) -> Result<()> {
        self.check_dt(dt)?;
        let (k, damp) = (self.spring, (1.0 - self.damping * dt).max(0.0));
        self.position
            .par_chunks_mut(CHUNK)
            .zip(self.velocity.par_chunks_mut(CHUNK))
            .zip(self.force.par_chunks_mut(CHUNK))
            .zip(self.rest.par_chunks(CHUNK))
            .for_each(|(((xs, vs), fs), rs)| {
                for i in 0..xs.len() {
                    advance(&mut xs[i], &mut vs[i], &mut fs[i], &rs[i], k, damp, dt);
                }
            });
        Ok(())
    }

    /// Largest distance of any vertex from its rest position.
    pub fn max_displacement(&self) -> f32 {
        self.position
            .iter()
            .zip(&self.rest)
            .map(|(x, r)| (x.xyz() - r.xyz()).length())
            .fold(0.0, f32::max)
    }

    /// Displacement of each vertex from rest.
    pub fn displacements(&self) -> Vec<Vec3> {
        self.position
            .iter()
            .zip(&self.rest)
            .map(|(x, r)| x.xyz() - r.xyz())
            .collect()
    }
}

#[inline(always)]
fn push_one(f: &mut Packed4, x: &Packed4, point: Vec3, u: Vec3, force: f32, falloff: Falloff) {
    let d = x.xyz() - point;
    let d2 = d.length_squared();
    let dir = if u == Vec3::ZERO {
        if d2 > 0.0 {
            d / d2.sqrt()
        } else {
            Vec3::ZERO
        }
    } else {
        u
    };
    let a = dir * (force * falloff.at(d2));
    f.x += a.x;
    f.y += a.y;
    f.z += a.z;
}

#[inline(always)]
fn advance(
    x: &mut Packed4,
    v: &mut Packed4,
    f: &mut Packed4,
    r: &Packed4,
    k: f32,
    damp: f32,
    h: f32,
) {
    v.x = (v.x + h * (f.x - k * (x.x - r.x))) * damp;
    v.y = (v.y + h * (f.y - k * (x.y - r.y))) * damp;
    v.z = (v.z + h * (f.z - k * (x.z - r.z))) * damp;
    x.x += h * v.x;
    x.y += h * v.y;
    x.z += h * v.z;
    *f = Packed4::default();
    // Settle exactly at rest once the motion is far below anything visible: a decaying
    // oscillation otherwise sinks into subnormal floats, which are ~100x slower.
    let (dx, dy, dz) = (x.x - r.x, x.y - r.y, x.z - r.z);
    if dx * dx + dy * dy + dz * dz + v.x * v.x + v.y * v.y + v.z * v.z < REST_EPSILON2 {
        x.x = r.x;
        x.y = r.y;
        x.z = r.z;
        *v = Packed4::default();
    }
}

/// Squared size (m², m²/s²) of motion below which a vertex is put back exactly at rest.
const REST_EPSILON2: f32 = 1e-20;
