//! Mesh generators: the icosphere and the tetrahedral cube that the builders and the standard
//! scenes start from.

use crate::error::{check_at_most, check_count, Result, WobbleError};
use crate::mesh::tetgen::TetMesh;
use crate::mesh::TriMesh;
use glam::Vec3;
use std::collections::HashMap;

/// Largest accepted icosphere subdivision level (9 gives 2.6M vertices).
pub const MAX_SUBDIVISIONS: usize = 9;

/// Largest accepted number of cube cells per side (256 gives 84M tetrahedra).
pub const MAX_CUBE_CELLS: usize = 256;

/// Checks the size and placement of a generated shape: `extent` finite and `> 0`, `origin`
/// finite.
fn check_extent(name: &'static str, extent: f32, origin: Vec3, reason: &'static str) -> Result<()> {
    if extent.is_finite() && extent > 0.0 && origin.is_finite() {
        Ok(())
    } else {
        Err(WobbleError::BadParameter {
            name,
            value: extent as f64,
            reason,
        })
    }
}

/// An icosphere: the icosahedron (12 vertices) with every triangle split in four `subdivisions`
/// times, new vertices projected onto the sphere; outward counter-clockwise triangles.
pub fn icosphere(center: Vec3, radius: f32, subdivisions: usize) -> Result<TriMesh> {
    check_at_most("icosphere subdivisions", subdivisions, MAX_SUBDIVISIONS)?;
    check_extent(
        "icosphere radius",
        radius,
        center,
        "needs a finite centre and a finite radius > 0",
    )?;
    let t = (1.0 + 5.0f32.sqrt()) / 2.0;
    let mut unit: Vec<Vec3> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|&p| Vec3::from_array(p).normalize())
    .collect();
    let mut tris: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::with_capacity(tris.len() * 2);
        let mut next = Vec::with_capacity(tris.len() * 4);
        let mut midpoint = |a: u32, b: u32, unit: &mut Vec<Vec3>| {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                unit.push((unit[a as usize] + unit[b as usize]).normalize());
                (unit.len() - 1) as u32
            })
        };
        for &[a, b, c] in &tris {
            let ab = midpoint(a, b, &mut unit);
            let bc = midpoint(b, c, &mut unit);
            let ca = midpoint(c, a, &mut unit);
            next.push([a, ab, ca]);
            next.push([b, bc, ab]);
            next.push([c, ca, bc]);
            next.push([ab, bc, ca]);
        }
        tris = next;
    }
    let positions = unit.iter().map(|&u| center + u * radius).collect();
    TriMesh::new(positions, tris)
}

/// The tetrahedra of a `k`³-cell grid of side `size` with lowest corner `corner`: vertex
/// `i + (k+1)(j + (k+1) l)` at `corner + size (i, j, l) / k`; 5 tetrahedra per cell, the
/// split alternating with the parity of `i + j + l` so that neighbouring faces match.
pub fn cube_tets(k: usize, corner: Vec3, size: f32) -> Result<TetMesh> {
    check_count("cube cells per side", k, MAX_CUBE_CELLS)?;
    check_extent(
        "cube size",
        size,
        corner,
        "needs a finite corner and a finite size > 0",
    )?;
    let m = k + 1;
    let v = |i: usize, j: usize, l: usize| (i + m * (j + m * l)) as u32;
    let mut positions = Vec::with_capacity(m * m * m);
    for l in 0..m {
        for j in 0..m {
            for i in 0..m {
                positions
                    .push(corner + Vec3::new(i as f32, j as f32, l as f32) * (size / k as f32));
            }
        }
    }
    // Corner b of a cell: bit 0 along x, bit 1 along y, bit 2 along z. An odd cell takes this
    // split mirrored in x (bit 0 of every corner flipped).
    const EVEN: [[usize; 4]; 5] = [
        [0, 3, 5, 6],
        [1, 0, 3, 5],
        [2, 0, 3, 6],
        [4, 0, 5, 6],
        [7, 3, 5, 6],
    ];
    let mut tets = Vec::with_capacity(5 * k * k * k);
    for l in 0..k {
        for j in 0..k {
            for i in 0..k {
                let mirror = (i + j + l) % 2;
                let c = |b: usize| {
                    let b = b ^ mirror;
                    v(i + (b & 1), j + ((b >> 1) & 1), l + ((b >> 2) & 1))
                };
                for t in &EVEN {
                    tets.push(t.map(c));
                }
            }
        }
    }
    TetMesh::new(positions, tets)
}
