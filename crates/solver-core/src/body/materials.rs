//! Physical units: XPBD compliances from Young's modulus, Poisson's ratio and geometry, so that
//! "softer" and "harder" are pascals, and heterogeneous materials (a stiff core in a soft body)
//! through per-constraint compliance.
//!
//! Theory. XPBD's constraint energy is `½ α⁻¹ C²` (Macklin et al. 2016). Matching it to a linear
//! elastic energy density `½ E ε²` integrated over the volume a constraint stands for gives:
//!
//! ```text
//! rod / edge (C = l - L, ε = C/L, volume V):  ½ E V (C/L)²   ⇒  α = L² / (E V)
//!     a rod of cross-section A (V = A L):  α = L / (E A)   (Hooke: k = E A / L)
//!     cloth of thickness t: V = t A_e, A_e = a third of the area of each adjacent triangle
//!     tetrahedral mesh:     V = a sixth of the volume of each adjacent tetrahedron
//! tetrahedron volume (C = V - V0, ε_V = C/V0):  ½ λ V0 (C/V0)²  ⇒  α = V0 / λ
//! ```
//!
//! (with `μ = E / (2(1+ν))`, `λ = E ν / ((1+ν)(1-2ν))`). The edge-plus-volume model is a
//! lumped approximation, not a continuum model: edges carry Young's modulus over their share
//! of the volume, the volume constraint Lamé's λ (so ν → 0.5 makes it incompressible). The
//! Neo-Hookean pair ([`crate::constraints::NeoHookean`], Macklin and Müller 2021) is the
//! continuum model for tetrahedra. Bending of a plate of thickness t uses the flexural rigidity
//! `D = E t³ / (12 (1 - ν²))`: the isometric bending energy (Bergou et al. 2006) with stiffness D
//! gives `α = 1 / D`.

use crate::body::Body;
use crate::constraints::{ConstraintKind, DistanceConstraints, NeoHookean, TetVolume};
use crate::error::{check_positive, Result, WobbleError};
use glam::Vec3;
use std::collections::HashMap;

/// An isotropic linear-elastic material.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Young's modulus E (Pa, > 0).
    pub young: f32,
    /// Poisson's ratio ν (0 <= ν < 0.5).
    pub poisson: f32,
}

impl Material {
    /// A material; E must be finite and > 0, ν in [0, 0.5).
    pub fn new(young: f32, poisson: f32) -> Result<Self> {
        let m = Material { young, poisson };
        m.validate()?;
        Ok(m)
    }

    /// Rubber-like: E = 1 MPa, ν = 0.45.
    pub fn rubber() -> Self {
        Material {
            young: 1e6,
            poisson: 0.45,
        }
    }

    /// Checks E and ν.
    pub fn validate(&self) -> Result<()> {
        if !(self.young.is_finite() && self.young > 0.0) {
            return Err(WobbleError::BadParameter {
                name: "Young's modulus",
                value: self.young as f64,
                reason: "must be finite and > 0 (Pa)",
            });
        }
        if !(0.0..0.5).contains(&self.poisson) {
            return Err(WobbleError::BadParameter {
                name: "Poisson's ratio",
                value: self.poisson as f64,
                reason: "must be in [0, 0.5)",
            });
        }
        Ok(())
    }

    /// Lamé parameters (μ, λ).
    pub fn lame(&self) -> (f32, f32) {
        let (e, nu) = (self.young as f64, self.poisson as f64);
        let mu = e / (2.0 * (1.0 + nu));
        let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
        (mu as f32, lambda as f32)
    }

    /// Bulk modulus κ = E / (3 (1 - 2ν)).
    pub fn bulk(&self) -> f32 {
        self.young / (3.0 * (1.0 - 2.0 * self.poisson))
    }

    /// Flexural rigidity of a plate of thickness `t`: D = E t³ / (12 (1 - ν²)) (N·m).
    pub fn flexural_rigidity(&self, thickness: f32) -> f32 {
        self.young * thickness.powi(3) / (12.0 * (1.0 - self.poisson * self.poisson))
    }
}

/// Compliance of a rod of Young's modulus `young`, cross-section `area` and rest length
/// `rest_length`: α = L / (E A) (m/N).
pub fn rod_compliance(young: f32, area: f32, rest_length: f32) -> Result<f32> {
    check_positive("Young's modulus", young)?;
    check_positive("cross-section area", area)?;
    check_positive("rest length", rest_length)?;
    Ok(rest_length / (young * area))
}

/// Compliance of an edge standing for `volume` of material: α = L² / (E V).
pub fn edge_compliance(young: f32, volume: f32, rest_length: f32) -> Result<f32> {
    check_positive("Young's modulus", young)?;
    check_positive("edge volume", volume)?;
    check_positive("rest length", rest_length)?;
    Ok(rest_length * rest_length / (young * volume))
}

/// Compliance of a tetrahedron volume constraint: α = V0 / λ.
pub fn tet_volume_compliance(material: &Material, rest_volume: f32) -> Result<f32> {
    material.validate()?;
    check_positive("rest volume", rest_volume)?;
    let (_, lambda) = material.lame();
    check_positive("Lamé λ (needs ν > 0)", lambda)?;
    Ok(rest_volume / lambda)
}

fn edge_key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Sets the compliance of the distance constraints that lie on triangle edges from cloth of
/// Young's modulus `young` and thickness `thickness` (α = L² / (E t A_e)); returns how many were
/// set. Other distance constraints (bending links) keep theirs.
pub fn apply_cloth_material(body: &mut Body, young: f32, thickness: f32) -> Result<usize> {
    check_positive("Young's modulus", young)?;
    check_positive("thickness", thickness)?;
    let x = &body.particles.x;
    let mut share: HashMap<(u32, u32), f32> = HashMap::new();
    for t in &body.topology.triangles {
        let [a, b, c] = t.map(|v| x[v as usize].xyz());
        let area = 0.5 * (b - a).cross(c - a).length();
        for k in 0..3 {
            *share.entry(edge_key(t[k], t[(k + 1) % 3])).or_insert(0.0) += area / 3.0;
        }
    }
    set_edge_compliance(&mut body.constraints.distance, &share, |area, l| {
        edge_compliance(young, thickness * area, l)
    })
}

fn set_edge_compliance(
    d: &mut DistanceConstraints,
    share: &HashMap<(u32, u32), f32>,
    alpha: impl Fn(f32, f32) -> Result<f32>,
) -> Result<usize> {
    let mut set = 0;
    for c in 0..d.len() {
        let [i, j] = d.pairs[c];
        if let Some(&s) = share.get(&edge_key(i, j)) {
            if s > 0.0 {
                d.compliance[c] = alpha(s, d.rest[c])?;
                set += 1;
            }
        }
    }
    Ok(set)
}

/// The edge-plus-volume model in units: distance constraints on tetrahedron edges get
/// α = L² / (E V_e) (V_e a sixth of each adjacent tetrahedron's volume), and every
/// [`TetVolume`] table α = V0 / λ. Only tetrahedra whose centroid satisfies `region` (and their
/// edges' shares) are changed, so calling it again with another material and region makes a
/// heterogeneous body. Returns how many constraints were set.
pub fn apply_tet_material(
    body: &mut Body,
    material: &Material,
    region: impl Fn(Vec3) -> bool,
) -> Result<usize> {
    material.validate()?;
    let x = &body.particles.x;
    let mut chosen = Vec::with_capacity(body.topology.tets.len());
    let mut share: HashMap<(u32, u32), f32> = HashMap::new();
    for tet in &body.topology.tets {
        let p = tet.map(|v| x[v as usize].xyz());
        let inside = region((p[0] + p[1] + p[2] + p[3]) * 0.25);
        chosen.push(inside);
        if inside {
            let v = crate::constraints::volume::signed_tet_volume(p[0], p[1], p[2], p[3]).abs();
            for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                *share.entry(edge_key(tet[a], tet[b])).or_insert(0.0) += v / 6.0;
            }
        }
    }
    let young = material.young;
    let mut set = set_edge_compliance(&mut body.constraints.distance, &share, |v, l| {
        edge_compliance(young, v, l)
    })?;
    let tets: HashMap<[u32; 4], bool> = body
        .topology
        .tets
        .iter()
        .zip(&chosen)
        .map(|(t, &c)| (*t, c))
        .collect();
    set += set_chosen_tets(
        &mut body.constraints.extra,
        |tet| tets.get(&tet).copied().unwrap_or(false),
        |table: &mut TetVolume, c| {
            table.compliance[c] = tet_volume_compliance(material, table.rest[c])?;
            Ok(())
        },
    )?;
    Ok(set)
}

/// Gives the tetrahedra of every [`NeoHookean`] table whose rest centroid satisfies `region`
/// the material `material`; returns how many tetrahedra were set.
pub fn apply_neohookean_material(
    body: &mut Body,
    material: &Material,
    region: impl Fn(Vec3) -> bool,
) -> Result<usize> {
    material.validate()?;
    let x = &body.particles.x;
    set_chosen_tets(
        &mut body.constraints.extra,
        |tet| region(tet.iter().map(|&v| x[v as usize].xyz()).sum::<Vec3>() * 0.25),
        |table: &mut NeoHookean, t| table.set_material(t, material),
    )
}

/// The constraint tables with a row per tetrahedron that a material is set on row by row.
trait TetRows: 'static {
    fn tets(&self) -> &[[u32; 4]];
}

impl TetRows for TetVolume {
    fn tets(&self) -> &[[u32; 4]] {
        &self.tets
    }
}

impl TetRows for NeoHookean {
    fn tets(&self) -> &[[u32; 4]] {
        &self.tets
    }
}

/// Calls `set` on each row of every `T` table in `extra` whose tetrahedron `chosen` accepts;
/// returns how many rows were set.
fn set_chosen_tets<T: TetRows>(
    extra: &mut [Box<dyn ConstraintKind>],
    chosen: impl Fn([u32; 4]) -> bool,
    mut set: impl FnMut(&mut T, usize) -> Result<()>,
) -> Result<usize> {
    let mut count = 0;
    for kind in extra.iter_mut() {
        if let Some(table) = kind.as_any_mut().downcast_mut::<T>() {
            for c in 0..table.tets().len() {
                if chosen(table.tets()[c]) {
                    set(table, c)?;
                    count += 1;
                }
            }
        }
    }
    Ok(count)
}
