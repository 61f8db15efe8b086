//! The parts of a triangle mesh: its connected components (triangles joined through shared
//! vertices), each as a mesh of its own. A file of several parts (a teapot's body, lid and
//! spout) is several bodies to a simulation: one body of disjoint parts would let them pass
//! through each other, since nothing joins or separates them.

use super::TriMesh;

/// The connected components of `mesh`, in the order of their first triangle, each with its
/// vertices renumbered from 0 in order of first use (vertices no triangle uses are dropped);
/// one part for a connected mesh, none for a mesh without triangles.
pub fn parts(mesh: &TriMesh) -> Vec<TriMesh> {
    let n = mesh.positions.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn root(parent: &mut [u32], mut v: u32) -> u32 {
        while parent[v as usize] != v {
            let up = parent[parent[v as usize] as usize];
            parent[v as usize] = up;
            v = up;
        }
        v
    }
    for t in &mesh.triangles {
        for k in 1..3 {
            let (a, b) = (root(&mut parent, t[0]), root(&mut parent, t[k]));
            if a != b {
                parent[a.max(b) as usize] = a.min(b);
            }
        }
    }
    // Part index of each root, in order of first triangle.
    let mut part_of_root = vec![u32::MAX; n];
    let mut out: Vec<TriMesh> = Vec::new();
    let mut new_index = vec![u32::MAX; n];
    for t in &mesh.triangles {
        let r = root(&mut parent, t[0]) as usize;
        if part_of_root[r] == u32::MAX {
            part_of_root[r] = out.len() as u32;
            out.push(TriMesh::default());
        }
        let part = &mut out[part_of_root[r] as usize];
        let tri = t.map(|v| {
            let v = v as usize;
            if new_index[v] == u32::MAX {
                new_index[v] = part.positions.len() as u32;
                part.positions.push(mesh.positions[v]);
            }
            new_index[v]
        });
        part.triangles.push(tri);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::shapes::icosphere;
    use glam::Vec3;

    /// Two spheres in one mesh are two parts, each with the sphere's vertices and triangles, in
    /// file order.
    #[test]
    fn two_spheres_in_one_mesh_are_two_parts() {
        let a = icosphere(Vec3::ZERO, 1.0, 1).unwrap();
        let b = icosphere(Vec3::X * 3.0, 0.5, 0).unwrap();
        let mut both = a.clone();
        let base = both.positions.len() as u32;
        both.positions.extend(&b.positions);
        both.triangles
            .extend(b.triangles.iter().map(|t| t.map(|v| v + base)));
        let p = parts(&both);
        assert_eq!(p.len(), 2);
        for (part, sphere) in p.iter().zip([&a, &b]) {
            assert_eq!(part.positions.len(), sphere.positions.len());
            assert_eq!(part.triangles.len(), sphere.triangles.len());
            assert_eq!(part.bounds(), sphere.bounds());
        }
        assert_eq!(parts(&a).len(), 1);
        assert!(parts(&TriMesh::default()).is_empty());
    }
}
