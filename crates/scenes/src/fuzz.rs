//! The fuzz target's whole path, shared with the regression tests (`tests/fuzz_corpus.rs`):
//! bytes as an OBJ file, strict and repairing loading (which must agree), body building, bending
//! hinges and 10 steps of the reference Gauss-Seidel on the ground, with invariants checked
//! after each stage.

use solver_core::build::body_from_trimesh;
use solver_core::collide::Collider;
use solver_core::error::WobbleError;
use solver_core::figures;
use solver_core::mesh::repair::{bending_hinges, parse_obj_repaired, MeshOptions};
use solver_core::solver::GaussSeidel;
use solver_core::step::{step, StepParams};
use std::path::Path;

/// What [`fuzz_entry`] did with its input.
#[derive(Debug)]
pub enum FuzzOutcome {
    /// The bytes were refused with an error (the expected fate of most random input).
    Refused(WobbleError),
    /// A body was built and stepped; `diverged` when a step returned `Diverged` (and rolled back).
    Stepped {
        /// Particles in the body.
        particles: usize,
        /// Steps that succeeded.
        steps: usize,
        /// True when a step diverged (the loop stops there).
        diverged: bool,
    },
}

/// The fuzz target's whole path, shared with the regression tests: bytes as an OBJ file, strict
/// and repaired loading, body building, bending hinges and 10 steps of the reference
/// Gauss-Seidel on the ground. Returns `Err` with a description when an invariant is broken
/// (the fuzz target panics on it); errors that are the input's fault are `Ok(Refused)`.
pub fn fuzz_entry(bytes: &[u8]) -> std::result::Result<FuzzOutcome, String> {
    let path = Path::new("fuzz.obj");
    let strict = parse_obj_repaired(bytes, path, &MeshOptions::default().strict(true));
    let (mut mesh, report) = match parse_obj_repaired(bytes, path, &MeshOptions::default()) {
        Ok(r) => r,
        Err(e) => {
            if let Ok((m, _)) = &strict {
                return Err(format!(
                    "strict loading accepted a mesh ({} triangles) that repairing loading refused: {e}",
                    m.triangles.len()
                ));
            }
            if e.to_string().contains("bug in wobble") {
                return Err(e.to_string());
            }
            return Ok(FuzzOutcome::Refused(e));
        }
    };
    match &strict {
        Ok((m, _)) if !report.is_clean() || m != &mesh => {
            return Err(format!(
                "strict loading accepted a mesh that repair changed ({report})"
            ))
        }
        Err(e) if report.is_clean() => {
            return Err(format!(
                "strict loading refused a mesh that needed no repair: {e}"
            ))
        }
        _ => {}
    }
    mesh.validate()
        .map_err(|e| format!("repair returned an invalid mesh: {e}"))?;
    if report.vertex_map.len() != report.vertices_in
        || report
            .vertex_map
            .iter()
            .any(|&v| v != u32::MAX && v as usize >= mesh.positions.len())
    {
        return Err("the repair report's vertex map is out of range".into());
    }
    let hinges = bending_hinges(&mesh);
    if hinges.non_manifold != report.non_manifold_edges {
        return Err("bending hinges and the repair report disagree on non-manifold edges".into());
    }
    let n = mesh.positions.len() as u32;
    if hinges.hinges.iter().flatten().any(|&v| v >= n) {
        return Err("a bending hinge names a vertex out of range".into());
    }

    // Drop it on the ground as the mesh scene does.
    let (lo, hi) = mesh.bounds();
    let lift = 0.5 * (hi.y - lo.y) - lo.y;
    mesh.positions.iter_mut().for_each(|p| p.y += lift);
    if mesh.positions.iter().any(|p| !p.is_finite()) {
        return Ok(FuzzOutcome::Refused(WobbleError::NonFinite {
            what: "lifted vertex y",
            index: 0,
            value: f32::INFINITY,
        }));
    }
    let mut body = match body_from_trimesh(&mesh, 1.0, 0.0) {
        Ok(b) => b,
        Err(e) => return Err(format!("a repaired mesh did not build a body: {e}")),
    };
    let d = &body.constraints().distance;
    if d.pairs.iter().flatten().any(|&p| p >= n)
        || d.rest.iter().any(|&r| !(r.is_finite() && r > 0.0))
    {
        return Err("a body constraint is out of range or has a bad rest length".into());
    }
    body.add_collider(Collider::ground(0.5, 0.0)).unwrap();
    let mut solver = GaussSeidel::new();
    let params = StepParams::default();
    for s in 0..10 {
        let before = body.particles().x().to_vec();
        match step(&mut body, &params, &mut solver, None) {
            Ok(_) => {
                if !figures::all_finite(&body) {
                    return Err(format!("step {s} returned Ok with a non-finite state"));
                }
            }
            Err(WobbleError::Diverged { .. }) => {
                if body.particles().x() != before {
                    return Err(format!("step {s} diverged without restoring the body"));
                }
                return Ok(FuzzOutcome::Stepped {
                    particles: body.len(),
                    steps: s,
                    diverged: true,
                });
            }
            Err(e) => return Err(format!("step {s} failed on a valid body: {e}")),
        }
    }
    Ok(FuzzOutcome::Stepped {
        particles: body.len(),
        steps: 10,
        diverged: false,
    })
}
