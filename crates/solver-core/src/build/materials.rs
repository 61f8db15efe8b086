//! Materials applied to a body: the compliances of its constraints set from Young's modulus,
//! Poisson's ratio and the geometry of the rest pose ([`crate::constraints::material`] gives the
//! theory and the per-constraint formulas).

use crate::body::Body;
use crate::constraints::material::{edge_compliance, tet_volume_compliance, Material};
use crate::constraints::{ConstraintKind, DistanceConstraints, NeoHookean, TetVolume};
use crate::error::{check_positive, Result};
use glam::Vec3;
use std::collections::HashMap;

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
            let v = crate::geometry::volume::signed_tet_volume(p[0], p[1], p[2], p[3]).abs();
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
