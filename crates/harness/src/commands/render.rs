//! `wobble render`: pictures of a simulation, so a reader sees the cloth hang and the jelly
//! land. A perspective projection of the body's surface triangles with flat shading (painter's
//! algorithm: far triangles first), drawn through plotters into a GIF and PNG stills.
//!
//! Shading: each triangle's colour is its side's base colour (front orange, back blue) times
//! `0.3 + 0.7 |n · l|` for the unit normal n and a fixed light direction l. Bodies without
//! triangles (the rope) are drawn as their distance constraints; tetrahedral bodies as the
//! faces that belong to one tetrahedron only (their boundary).

use crate::measure::sim::{Sim, Spec};
use crate::output::section::{link, rel, Section};
use crate::setup::{check_mesh, check_size, Error, Passes, SceneArg, SolverArg};
use clap::Args;
use plotters::coord::Shift;
use plotters::prelude::*;
use solver_core::glam::Vec3;
use solver_core::{figures, Body};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Arguments of `wobble render`.
#[derive(Args, Debug, Clone)]
pub struct RenderArgs {
    /// Scene.
    #[arg(long, value_enum, default_value_t = SceneArg::Jelly)]
    pub scene: SceneArg,
    /// Size parameter (default per scene: cloth, rope and flag 32, jelly 3, cube 4).
    #[arg(long)]
    pub n: Option<usize>,
    /// Mesh file for the mesh scene.
    #[arg(long)]
    pub mesh: Option<PathBuf>,
    /// Solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Gs)]
    pub solver: SolverArg,
    /// Solver iterations per substep, substeps per step.
    #[command(flatten)]
    pub passes: Passes,
    /// Frames (one step of 1/60 s each).
    #[arg(long, default_value_t = 120)]
    pub frames: usize,
    /// Image width in pixels.
    #[arg(long, default_value_t = 640)]
    pub width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 480)]
    pub height: u32,
    /// Number of PNG stills, spread over the run.
    #[arg(long, default_value_t = 4)]
    pub stills: usize,
    /// The GIF to write (a path ending in .gif), or a directory for `<scene>.gif`.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// The faces to draw: surface triangles, tetrahedron boundary faces, or none (edges only).
pub fn faces(body: &Body) -> Vec<[u32; 3]> {
    let t = &body.topology();
    if !t.triangles.is_empty() {
        return t.triangles.clone();
    }
    let mut count: HashMap<[u32; 3], ([u32; 3], usize)> = HashMap::new();
    for tet in &t.tets {
        for f in [[0, 1, 2], [0, 3, 1], [1, 3, 2], [0, 2, 3]] {
            let face = [tet[f[0]], tet[f[1]], tet[f[2]]];
            let mut key = face;
            key.sort();
            count.entry(key).or_insert((face, 0)).1 += 1;
        }
    }
    let mut out: Vec<[u32; 3]> = count
        .into_values()
        .filter(|(_, c)| *c == 1)
        .map(|(f, _)| f)
        .collect();
    out.sort();
    out
}

/// A pinhole camera looking at a box from above and in front.
#[derive(Debug, Clone, Copy)]
pub struct Camera {
    eye: Vec3,
    right: Vec3,
    up: Vec3,
    forward: Vec3,
    focal: f32,
    center: (f32, f32),
}

impl Camera {
    /// Frames the box `lo..hi` so that it fills about 88% of an image of `size`: the box's
    /// corners are projected and the picture is scaled and centred on them (a box's inside
    /// projects inside its corners' hull).
    pub fn framing(lo: Vec3, hi: Vec3, size: (u32, u32)) -> Camera {
        let mid = 0.5 * (lo + hi);
        let radius = (0.5 * (hi - lo).length()).max(1e-3);
        let dir = Vec3::new(0.9, 0.7, 1.6).normalize();
        let eye = mid + dir * (3.0 * radius);
        let forward = (mid - eye).normalize();
        let right = forward.cross(Vec3::Y).normalize();
        let up = right.cross(forward);
        let mut cam = Camera {
            eye,
            right,
            up,
            forward,
            focal: 1.0,
            center: (0.0, 0.0),
        };
        let (mut x0, mut x1, mut y0, mut y1) = (
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
        );
        for c in 0..8 {
            let p = Vec3::new(
                if c & 1 == 0 { lo.x } else { hi.x },
                if c & 2 == 0 { lo.y } else { hi.y },
                if c & 4 == 0 { lo.z } else { hi.z },
            );
            let (x, y) = cam.normalized(p);
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        let (w, h) = (size.0 as f32, size.1 as f32);
        cam.focal = 0.88 * (w / (x1 - x0).max(1e-6)).min(h / (y1 - y0).max(1e-6));
        cam.center = (
            0.5 * w - cam.focal * 0.5 * (x0 + x1),
            0.5 * h + cam.focal * 0.5 * (y0 + y1),
        );
        cam
    }

    /// Perspective coordinates (x/z, y/z) before scaling to pixels.
    fn normalized(&self, p: Vec3) -> (f32, f32) {
        let d = p - self.eye;
        let z = d.dot(self.forward).max(1e-4);
        (d.dot(self.right) / z, d.dot(self.up) / z)
    }

    /// Pixel position and depth of a point.
    pub fn project(&self, p: Vec3) -> (i32, i32, f32) {
        let (x, y) = self.normalized(p);
        (
            (self.center.0 + self.focal * x).round() as i32,
            (self.center.1 - self.focal * y).round() as i32,
            (p - self.eye).dot(self.forward),
        )
    }
}

/// One recorded frame.
pub struct Frame {
    /// Positions.
    pub x: Vec<Vec3>,
    /// Mean stretch.
    pub stretch: f32,
}

/// What stays the same over the frames.
pub struct Scene3d {
    /// Triangles to draw.
    pub faces: Vec<[u32; 3]>,
    /// Edges to draw when there are no faces.
    pub edges: Vec<[u32; 2]>,
    /// The camera.
    pub camera: Camera,
    /// Height of a ground plane to draw, if any.
    pub ground: Option<(f32, Vec3, Vec3)>,
    /// Caption prefix.
    pub caption: String,
}

const LIGHT: Vec3 = Vec3::new(0.35, 0.85, 0.4);

fn shade(base: (u8, u8, u8), k: f32) -> RGBColor {
    let f = |c: u8| ((c as f32) * k).clamp(0.0, 255.0) as u8;
    RGBColor(f(base.0), f(base.1), f(base.2))
}

/// Draws one frame.
pub fn draw_frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &Scene3d,
    frame: &Frame,
    label: &str,
) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&RGBColor(250, 250, 247)).map_err(|x| e(&x))?;
    let cam = &s.camera;
    if let Some((y, lo, hi)) = s.ground {
        let grid = RGBColor(200, 200, 195);
        let steps = 10;
        for k in 0..=steps {
            let t = k as f32 / steps as f32;
            let x = lo.x + t * (hi.x - lo.x);
            let z = lo.z + t * (hi.z - lo.z);
            for (a, b) in [
                (Vec3::new(x, y, lo.z), Vec3::new(x, y, hi.z)),
                (Vec3::new(lo.x, y, z), Vec3::new(hi.x, y, z)),
            ] {
                let (ax, ay, _) = cam.project(a);
                let (bx, by, _) = cam.project(b);
                root.draw(&PathElement::new(vec![(ax, ay), (bx, by)], grid))
                    .map_err(|x| e(&x))?;
            }
        }
    }
    let proj: Vec<(i32, i32, f32)> = frame.x.iter().map(|&p| cam.project(p)).collect();
    if s.faces.is_empty() {
        for &[i, j] in &s.edges {
            let (a, b) = (proj[i as usize], proj[j as usize]);
            root.draw(&PathElement::new(
                vec![(a.0, a.1), (b.0, b.1)],
                RGBColor(40, 90, 160).stroke_width(2),
            ))
            .map_err(|x| e(&x))?;
        }
    } else {
        let mut order: Vec<(f32, usize)> = s
            .faces
            .iter()
            .enumerate()
            .map(|(k, f)| (f.iter().map(|&v| proj[v as usize].2).sum::<f32>(), k))
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0));
        let outline = s.faces.len() <= 4000;
        for (_, k) in order {
            let [a, b, c] = s.faces[k];
            let (pa, pb, pc) = (
                frame.x[a as usize],
                frame.x[b as usize],
                frame.x[c as usize],
            );
            let nrm = (pb - pa).cross(pc - pa);
            let len = nrm.length();
            if !(len > 0.0 && len.is_finite()) {
                continue;
            }
            let nrm = nrm / len;
            let centroid = (pa + pb + pc) / 3.0;
            let front = nrm.dot(cam.eye - centroid) > 0.0;
            let base = if front {
                (245, 140, 50)
            } else {
                (70, 120, 200)
            };
            let color = shade(base, 0.3 + 0.7 * nrm.dot(LIGHT.normalize()).abs());
            let pts: Vec<(i32, i32)> = [a, b, c]
                .iter()
                .map(|&v| (proj[v as usize].0, proj[v as usize].1))
                .collect();
            root.draw(&Polygon::new(pts.clone(), color.filled()))
                .map_err(|x| e(&x))?;
            if outline {
                let mut ring = pts;
                ring.push(ring[0]);
                root.draw(&PathElement::new(ring, shade(base, 0.25).mix(0.35)))
                    .map_err(|x| e(&x))?;
            }
        }
    }
    let style = ("sans-serif", 15).into_font().color(&RGBColor(30, 30, 30));
    root.draw(&Text::new(s.caption.clone(), (10, 8), style.clone()))
        .map_err(|x| e(&x))?;
    root.draw(&Text::new(
        format!("{label}   mean stretch {:.2}%", 100.0 * frame.stretch),
        (10, 28),
        style,
    ))
    .map_err(|x| e(&x))?;
    Ok(())
}

/// Where the GIF goes for `--out`.
pub fn gif_path(out: &Path, scene: &str) -> PathBuf {
    if out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gif"))
    {
        out.to_path_buf()
    } else {
        out.join(format!("{scene}.gif"))
    }
}

/// `wobble render`.
pub fn run(a: &RenderArgs) -> Result<Section, Error> {
    check_mesh(a.scene.name(), &a.mesh)?;
    let n = a.n.unwrap_or_else(|| a.scene.default_n());
    check_size(a.scene.name(), n)?;
    if a.frames == 0 || a.frames > 10_000 {
        return Err(Error::Arg("--frames must be in 1..=10000".into()));
    }
    if !(16..=4096).contains(&a.width) || !(16..=4096).contains(&a.height) {
        return Err(Error::Arg(
            "--width and --height must be in 16..=4096".into(),
        ));
    }
    let mut spec = Spec::new(a.scene.name(), n, a.solver.name())
        .iterations(a.passes.iterations)
        .substeps(a.passes.substeps);
    spec.mesh = a.mesh.clone();
    let mut sim = Sim::new(&spec)?;
    let mut frames = Vec::with_capacity(a.frames);
    let record = |b: &Body| Frame {
        x: b.particles.x.iter().map(|p| p.xyz()).collect(),
        stretch: figures::stretch(b).0,
    };
    frames.push(record(&sim.body));
    let mut diverged = None;
    while frames.len() < a.frames {
        if let Err(e) = solver_core::step(&mut sim.body, &sim.params, sim.solver.as_mut(), None) {
            diverged = Some(e.to_string());
            break;
        }
        frames.push(record(&sim.body));
    }
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for f in &frames {
        for &p in &f.x {
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    let has_ground = !sim.body.colliders.is_empty();
    if has_ground {
        lo.y = lo.y.min(0.0);
    }
    let pad = 0.15 * (hi - lo).max_element().max(0.1);
    let ground = has_ground.then(|| (0.0, lo - Vec3::splat(pad), hi + Vec3::splat(pad)));
    let size = (a.width, a.height);
    let what = body_label(a.scene.name(), n, a.mesh.as_deref(), &sim.body);
    let s3 = Scene3d {
        faces: faces(&sim.body),
        edges: sim.body.constraints().distance.pairs.clone(),
        camera: Camera::framing(lo, hi, size),
        ground,
        caption: format!(
            "{what}, {} vertices, {}, {} it x {} sub",
            sim.body.len(),
            a.solver,
            a.passes.iterations,
            a.passes.substeps
        ),
    };
    let gif = gif_path(&a.out, a.scene.name());
    if let Some(dir) = gif.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| crate::setup::io_error(dir, e))?;
        }
    }
    let label = |k: usize| {
        format!(
            "frame {k}/{}  t = {:.2} s",
            frames.len() - 1,
            k as f32 / 60.0
        )
    };
    {
        let root = BitMapBackend::gif(&gif, size, 1000 / 60)
            .map_err(|e| crate::setup::io_error(&gif, e))?
            .into_drawing_area();
        for (k, f) in frames.iter().enumerate() {
            draw_frame(&root, &s3, f, &label(k)).map_err(|e| crate::setup::io_error(&gif, e))?;
            root.present()
                .map_err(|e| crate::setup::io_error(&gif, e))?;
        }
    }
    let mut files = vec![gif.clone()];
    let stem = gif.with_extension("");
    let count = a.stills.min(frames.len());
    for i in 0..count {
        let k = if count == 1 {
            frames.len() - 1
        } else {
            i * (frames.len() - 1) / (count - 1)
        };
        let png = PathBuf::from(format!("{}_frame{k:03}.png", stem.display()));
        {
            let root = BitMapBackend::new(&png, size).into_drawing_area();
            draw_frame(&root, &s3, &frames[k], &label(k))
                .map_err(|e| crate::setup::io_error(&png, e))?;
            root.present()
                .map_err(|e| crate::setup::io_error(&png, e))?;
        }
        files.push(png);
    }
    let base = gif.parent().unwrap_or(Path::new("."));
    let mut sec = Section::new(&format!("Pictures: {}", a.scene));
    sec.line(format!(
        "{}: {} frames of {what} ({}), {} it x {} substeps{}.\n",
        link(&gif, base),
        frames.len(),
        a.solver,
        a.passes.iterations,
        a.passes.substeps,
        diverged.map_or(String::new(), |d| format!("; stopped early: {d}"))
    ));
    for f in files.iter().skip(1) {
        sec.line(format!(
            "![{}]({})",
            f.file_name().unwrap_or_default().to_string_lossy(),
            rel(f, base)
        ));
    }
    sec.add_files(files);
    Ok(sec)
}

/// What a picture shows: the scene and its size, or for a mesh (which has no size parameter)
/// the file's name and its triangle count.
fn body_label(scene: &str, n: usize, mesh: Option<&Path>, body: &Body) -> String {
    match mesh {
        Some(path) if scene == "mesh" => format!(
            "{} ({} triangles)",
            path.file_name().unwrap_or_default().to_string_lossy(),
            body.topology().triangles.len()
        ),
        _ => format!("{scene} n={n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mesh_is_labelled_by_its_file_and_counts_not_by_n() {
        let cloth = scenes::cloth(4).unwrap();
        assert_eq!(body_label("cloth", 4, None, &cloth), "cloth n=4");
        let label = body_label("mesh", 32, Some(Path::new("dir/teapot.obj")), &cloth);
        assert_eq!(label, "teapot.obj (18 triangles)");
    }

    #[test]
    fn tetrahedron_boundary_faces_are_those_used_once() {
        let mut body = scenes::cloth(2).unwrap();
        body.topology_mut().triangles.clear();
        // The same tetrahedron twice: every face is shared, none is on the boundary.
        body.topology_mut().tets = vec![[0, 1, 2, 3], [3, 2, 1, 0]];
        assert_eq!(faces(&body).len(), 0);
        body.topology_mut().tets = vec![[0, 1, 2, 3]];
        assert_eq!(faces(&body).len(), 4);
    }

    #[test]
    fn the_camera_keeps_the_framed_box_inside_the_image() {
        let cam = Camera::framing(Vec3::ZERO, Vec3::ONE, (320, 240));
        for corner in 0..8 {
            let p = Vec3::new(
                (corner & 1) as f32,
                ((corner >> 1) & 1) as f32,
                ((corner >> 2) & 1) as f32,
            );
            let (x, y, z) = cam.project(p);
            assert!(z > 0.0);
            assert!(
                (0..320).contains(&x) && (0..240).contains(&y),
                "{corner}: {x},{y}"
            );
        }
    }
}
