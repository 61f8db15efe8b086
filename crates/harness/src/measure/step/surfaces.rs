//! The figures and files every `wobble step` run may add, one body or a world:
//! `self_intersections`, `intersecting_pairs` and `--dump-obj`.

use super::args::StepArgs;
use crate::setup::{io_error, Error};
use solver_core::figures::{self, Surface};
use solver_core::Body;
use std::io::Write;
use std::path::Path;

/// `self_intersections` of a single-body run: counted with `--intersections`, else `None`.
pub fn intersections(args: &StepArgs, surfaces: &[Surface]) -> Result<Option<u64>, Error> {
    if !args.intersections {
        return Ok(None);
    }
    Ok(Some(figures::self_intersections(surfaces)?))
}

/// `intersecting_pairs` of `surfaces`: counted for the mesh scene, the worlds and with
/// `--intersections`, else `None`.
pub fn triangle_pairs(
    args: &StepArgs,
    world: bool,
    surfaces: &[Surface],
) -> Result<Option<u64>, Error> {
    if !(world || args.intersections || args.scene == crate::setup::StepSceneArg::Mesh) {
        return Ok(None);
    }
    Ok(Some(figures::intersecting_triangle_pairs(surfaces)?))
}

/// A body's positions in the world (its origin added), for figures over several bodies, whose
/// particles are each relative to their own origin.
pub fn world_x(b: &Body) -> Vec<solver_core::Packed4> {
    let origin = b.origin();
    b.particles()
        .x()
        .iter()
        .map(|p| solver_core::Packed4::new((p.xyz().as_dvec3() + origin).as_vec3(), p.w))
        .collect()
}

/// Writes the positions of `bodies` to `path` as OBJ, one object (`o body<k>`) per body with
/// its surface triangles (bodies without triangles as bare vertices).
pub fn dump_obj(path: &Path, bodies: &[&Body]) -> Result<(), Error> {
    let file = std::fs::File::create(path).map_err(|e| io_error(path, e))?;
    let mut out = std::io::BufWriter::new(file);
    let mut base = 1usize;
    let mut write = || -> std::io::Result<()> {
        for (k, b) in bodies.iter().enumerate() {
            writeln!(out, "o body{k}")?;
            // World positions: a body's particles are relative to its origin.
            for i in 0..b.len() {
                let p = b.world_position(i);
                writeln!(out, "v {} {} {}", p.x as f32, p.y as f32, p.z as f32)?;
            }
            for t in &b.topology().triangles {
                let [i, j, l] = t.map(|v| v as usize + base);
                writeln!(out, "f {i} {j} {l}")?;
            }
            base += b.particles().len();
        }
        out.flush()
    };
    write().map_err(|e| io_error(path, e))
}
