//! `wobble render`: pictures of a simulation, so a reader sees the cloth hang, the jelly land
//! and the bodies of a world meet. A perspective projection of the bodies' surface triangles
//! with flat shading (painter's algorithm: far triangles first), drawn through plotters into a
//! GIF and PNG stills. A standard scene is one body; a world scene (`drape`, `tunnel`,
//! `stack`, `bodies`) is stepped by its [`World`] and every body of it is drawn, each in its
//! own colour ([`BODY_COLOURS`]).
//!
//! Shading: each triangle's colour is its body's base colour for the side it shows (body 0:
//! front orange, back blue) times `0.3 + 0.7 |n · l|` for the unit normal n and a fixed light
//! direction l. Bodies without triangles (the rope) are drawn as their distance constraints;
//! tetrahedral bodies as the faces that belong to one tetrahedron only (their boundary).
//!
//! Colliders: a horizontal plane (the ground) is drawn as a grid under the bodies; spheres,
//! capsules, boxes and a world's triangle-mesh colliders as translucent grey triangles,
//! sorted with the bodies' own, so that a body behind a wall shows through it. A tilted plane
//! is not drawn. The camera frames every body over the whole run together with the bounded
//! colliders (not the planes, which have no bounds).

use crate::measure::sim::{Sim, Spec};
use crate::measure::step::world::{build_world, world_gravity, WorldSpec};
use crate::output::section::{link, rel, Section};
use crate::setup::{check_size, Error, Passes, SceneArg, SolverArg, StepSceneArg, Tuning};
use clap::Args;
use plotters::coord::Shift;
use plotters::prelude::*;
use solver_core::collide::Shape;
use solver_core::glam::Vec3;
use solver_core::mesh::repair::MeshOptions;
use solver_core::mesh::shapes::icosphere;
use solver_core::{figures, Body, Collider, StepParams, World};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Arguments of `wobble render`.
#[derive(Args, Debug, Clone)]
pub struct RenderArgs {
    /// Scene: a standard scene of docs/SCENES.md, or a world of several bodies.
    #[arg(long, value_enum, default_value_t = StepSceneArg::Jelly)]
    pub scene: StepSceneArg,
    /// Size parameter (default per scene: cloth, rope and flag 32, jelly 3, cube 4, drape 64;
    /// unused by mesh, tunnel, stack and bodies).
    #[arg(long)]
    pub n: Option<usize>,
    /// Mesh file for the mesh scene; the `bodies` world takes one per body (repeat `--mesh`).
    #[arg(long)]
    pub mesh: Vec<PathBuf>,
    /// World scenes: turn the self-collision of `drape` and `bodies` off.
    #[arg(long)]
    pub no_self_collision: bool,
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
    /// Positions of every body's particles, body after body.
    pub x: Vec<Vec3>,
    /// Mean stretch over every body's structural constraints.
    pub stretch: f32,
}

/// A base colour, red, green and blue.
pub type Rgb = (u8, u8, u8);

/// The base colours bodies are drawn in, `(front, back)`: body `k` of a world takes entry
/// `k % len` (body 0 of every scene: front orange, back blue). The fronts differ in hue, so
/// that a body can be told from another by the hue of its pixels whatever the shading.
pub const BODY_COLOURS: [(Rgb, Rgb); 6] = [
    ((245, 140, 50), (70, 120, 200)),
    ((60, 175, 90), (35, 105, 55)),
    ((165, 80, 205), (95, 50, 120)),
    ((225, 55, 85), (130, 35, 50)),
    ((225, 200, 40), (140, 120, 25)),
    ((35, 185, 205), (25, 110, 120)),
];

/// The base colour of the colliders, drawn at [`COLLIDER_ALPHA`] over what lies behind them.
const COLLIDER_COLOUR: (u8, u8, u8) = (150, 150, 145);

/// Opacity of a collider's triangles.
const COLLIDER_ALPHA: f64 = 0.35;

/// What stays the same over the frames.
pub struct Scene3d {
    /// Triangles to draw, indexing a frame's positions.
    pub faces: Vec<[u32; 3]>,
    /// The body of each face (its entry of [`BODY_COLOURS`], modulo the length).
    pub face_body: Vec<usize>,
    /// Edges to draw for the bodies without faces, with their body.
    pub edges: Vec<([u32; 2], usize)>,
    /// The colliders' triangles (they do not move).
    pub statics: Vec<[Vec3; 3]>,
    /// The camera.
    pub camera: Camera,
    /// Height of a ground plane to draw and the box it spans, if any.
    pub ground: Option<(f32, Vec3, Vec3)>,
    /// Caption prefix.
    pub caption: String,
}

const LIGHT: Vec3 = Vec3::new(0.35, 0.85, 0.4);

fn shade(base: (u8, u8, u8), k: f32) -> RGBColor {
    let f = |c: u8| ((c as f32) * k).clamp(0.0, 255.0) as u8;
    RGBColor(f(base.0), f(base.1), f(base.2))
}

/// The colours of body `k`.
fn colours(k: usize) -> (Rgb, Rgb) {
    BODY_COLOURS[k % BODY_COLOURS.len()]
}

/// One thing to draw, in the painter's order.
enum Item {
    Face(usize),
    Edge(usize),
    Static(usize),
}

/// The shading factor of a triangle with unit normal `nrm`.
fn lit(nrm: Vec3) -> f32 {
    0.3 + 0.7 * nrm.dot(LIGHT.normalize()).abs()
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
    // Depths as sums of three vertex depths (an edge's two scaled to match).
    let mut order: Vec<(f32, Item)> = Vec::new();
    for (k, f) in s.faces.iter().enumerate() {
        let d = f.iter().map(|&v| proj[v as usize].2).sum::<f32>();
        order.push((d, Item::Face(k)));
    }
    for (k, ([i, j], _)) in s.edges.iter().enumerate() {
        let d = 1.5 * (proj[*i as usize].2 + proj[*j as usize].2);
        order.push((d, Item::Edge(k)));
    }
    for (k, t) in s.statics.iter().enumerate() {
        let d = t.iter().map(|&p| cam.project(p).2).sum::<f32>();
        order.push((d, Item::Static(k)));
    }
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    let outline = s.faces.len() <= 4000;
    for (_, item) in order {
        match item {
            Item::Face(k) => {
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
                let (front_base, back_base) = colours(s.face_body[k]);
                let base = if front { front_base } else { back_base };
                let color = shade(base, lit(nrm));
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
            Item::Edge(k) => {
                let ([i, j], body) = s.edges[k];
                let (a, b) = (proj[i as usize], proj[j as usize]);
                root.draw(&PathElement::new(
                    vec![(a.0, a.1), (b.0, b.1)],
                    shade(colours(body).1, 0.75).stroke_width(2),
                ))
                .map_err(|x| e(&x))?;
            }
            Item::Static(k) => {
                let [pa, pb, pc] = s.statics[k];
                let nrm = (pb - pa).cross(pc - pa).normalize_or_zero();
                let color = shade(COLLIDER_COLOUR, lit(nrm)).mix(COLLIDER_ALPHA);
                let pts: Vec<(i32, i32)> = [pa, pb, pc]
                    .iter()
                    .map(|&p| {
                        let (x, y, _) = cam.project(p);
                        (x, y)
                    })
                    .collect();
                root.draw(&Polygon::new(pts, color.filled()))
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

/// What is stepped: one body with its solver, a world of bodies with theirs, or the animated
/// character (posed before each step).
enum Model {
    Body(Box<Sim>),
    World(World, StepParams),
    Character(
        Box<scenes::character::Character>,
        Box<dyn solver_core::Solver>,
        StepParams,
    ),
}

impl Model {
    /// The scene of `a`, built.
    fn new(a: &RenderArgs, n: usize) -> Result<Model, Error> {
        let params = StepParams {
            iterations: a.passes.iterations,
            substeps: a.passes.substeps,
            ..Default::default()
        };
        if a.scene == StepSceneArg::Character {
            let params = StepParams {
                contact_margin: scenes::character::CONTACT_MARGIN,
                ..params
            };
            params.validate()?;
            let tuning = Tuning::default();
            let solver = tuning.tune(a.solver.kind()).build(&tuning.options(1))?;
            let character = scenes::character::Character::new(n)?;
            return Ok(Model::Character(Box::new(character), solver, params));
        }
        match a.scene.body() {
            Some(scene) => {
                let mut spec = Spec::new(scene.name(), n, a.solver.name())
                    .iterations(a.passes.iterations)
                    .substeps(a.passes.substeps);
                spec.mesh = body_mesh(scene, &a.mesh)?;
                Ok(Model::Body(Box::new(Sim::new(&spec)?)))
            }
            None => {
                params.validate()?;
                let spec = WorldSpec {
                    scene: a.scene,
                    n,
                    meshes: &a.mesh,
                    ordering: "natural",
                    mesh_options: MeshOptions::default(),
                    self_collision: !a.no_self_collision,
                    // `layers` at its default count; the render draws the contact scenes
                    // without their script (the sphere does not turn, the pins do not fold).
                    layers: 8,
                };
                let tuning = Tuning::default();
                let kind = tuning.tune(a.solver.kind());
                let world = build_world(&spec, kind, &tuning.options(1))?;
                let gravity = world_gravity(a.scene);
                Ok(Model::World(world, StepParams { gravity, ..params }))
            }
        }
    }

    /// The bodies, in their order.
    fn bodies(&self) -> Vec<&Body> {
        match self {
            Model::Body(sim) => vec![&sim.body],
            Model::World(w, _) => w.bodies().map(|b| b.body()).collect(),
            Model::Character(c, ..) => vec![&c.body],
        }
    }

    /// One step of 1/60 s, or the reason it failed.
    fn step(&mut self) -> Result<(), String> {
        match self {
            Model::Body(sim) => {
                solver_core::step(&mut sim.body, &sim.params, sim.solver.as_mut(), None)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            Model::World(w, params) => w.step(params).map(|_| ()).map_err(|e| e.to_string()),
            Model::Character(c, solver, params) => c
                .animate(params.dt)
                .and_then(|_| solver_core::step(&mut c.body, params, solver.as_mut(), None))
                .map(|_| ())
                .map_err(|e| e.to_string()),
        }
    }

    /// The triangle-mesh colliders of a world.
    fn meshes(&self) -> Vec<[Vec3; 3]> {
        let Model::World(w, _) = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (_, m) in w.mesh_colliders() {
            let v = m.vertices();
            for t in m.triangles() {
                out.push(t.map(|i| v[i as usize].xyz()));
            }
        }
        out
    }
}

/// The mesh file of single-body scene `scene`: exactly one, that exists, for `mesh`; none for
/// the others (a `--mesh` they would not read is refused).
fn body_mesh(scene: SceneArg, mesh: &[PathBuf]) -> Result<Option<PathBuf>, Error> {
    match (scene, mesh) {
        (SceneArg::Mesh, []) => Err(Error::Arg("the mesh scene needs --mesh FILE".into())),
        (SceneArg::Mesh, [p]) if !p.exists() => Err(Error::Arg(format!(
            "mesh file {} does not exist",
            p.display()
        ))),
        (SceneArg::Mesh, [p]) => Ok(Some(p.clone())),
        (SceneArg::Mesh, more) => Err(Error::Arg(format!(
            "--mesh given {} times; only --scene bodies takes one mesh per body",
            more.len()
        ))),
        (_, []) => Ok(None),
        (other, _) => Err(Error::Arg(format!(
            "--mesh is for the mesh scene and the bodies world; the {other} scene builds its own body"
        ))),
    }
}

/// Mean stretch over the structural constraints of every body together
/// ([`figures::stretch`]'s mean, weighted by each body's count).
fn mean_stretch(bodies: &[&Body]) -> f32 {
    let (mut sum, mut count) = (0.0f64, 0usize);
    for b in bodies {
        let d = b.constraints().distance.len();
        let structural = b.topology().structural;
        let c = if structural > 0 { structural.min(d) } else { d };
        sum += figures::stretch(b).0 as f64 * c as f64;
        count += c;
    }
    if count == 0 {
        0.0
    } else {
        (sum / count as f64) as f32
    }
}

/// Triangles of a closed shape, for drawing; `None` for a plane (drawn as the ground grid, or
/// not at all when tilted).
fn shape_triangles(shape: &Shape) -> Option<Vec<[Vec3; 3]>> {
    let sphere = |center: Vec3, radius: f32| -> Vec<[Vec3; 3]> {
        icosphere(center, radius, 2)
            .map(|m| {
                m.triangles
                    .iter()
                    .map(|t| t.map(|i| m.positions[i as usize]))
                    .collect()
            })
            .unwrap_or_default()
    };
    match *shape {
        Shape::Plane { .. } => None,
        Shape::Sphere { center, radius } => Some(sphere(center, radius)),
        Shape::Capsule { a, b, radius } => {
            // A unit sphere's vertices moved to the end on their side of the middle plane:
            // the hemispheres cap the ends, the triangles across the middle make the tube.
            let axis = (b - a).normalize_or_zero();
            let unit = sphere(Vec3::ZERO, 1.0);
            let place = |v: Vec3| if v.dot(axis) >= 0.0 { b } else { a } + radius * v;
            Some(unit.iter().map(|t| t.map(place)).collect())
        }
        Shape::Cuboid {
            center,
            half,
            rotation,
        } => {
            let corner = |c: usize| {
                let s = Vec3::new(
                    if c & 1 == 0 { -1.0 } else { 1.0 },
                    if c & 2 == 0 { -1.0 } else { 1.0 },
                    if c & 4 == 0 { -1.0 } else { 1.0 },
                );
                center + rotation * (s * half)
            };
            // The six faces as corner quads (bit 0: x, bit 1: y, bit 2: z).
            let quads = [
                [0, 2, 6, 4],
                [1, 5, 7, 3],
                [0, 4, 5, 1],
                [2, 3, 7, 6],
                [0, 1, 3, 2],
                [4, 6, 7, 5],
            ];
            let mut out = Vec::with_capacity(12);
            for q in quads {
                out.push([corner(q[0]), corner(q[1]), corner(q[2])]);
                out.push([corner(q[0]), corner(q[2]), corner(q[3])]);
            }
            Some(out)
        }
        // A shape this drawing does not know is left out of the picture.
        _ => None,
    }
}

/// The height of a horizontal plane collider (free side up or down), if `shape` is one.
fn ground_height(shape: &Shape) -> Option<f32> {
    match *shape {
        Shape::Plane { normal, offset }
            if normal.x == 0.0 && normal.z == 0.0 && normal.y != 0.0 =>
        {
            Some(offset / normal.y)
        }
        _ => None,
    }
}

/// The colliders of every body, each once (a world's shape collider is copied to each body).
fn colliders(bodies: &[&Body]) -> Vec<Collider> {
    let mut out: Vec<Collider> = Vec::new();
    for b in bodies {
        for c in b.colliders() {
            if !out.contains(c) {
                out.push(*c);
            }
        }
    }
    out
}

/// `wobble render`.
pub fn run(a: &RenderArgs) -> Result<Section, Error> {
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
    let mut model = Model::new(a, n)?;
    let mut frames = Vec::with_capacity(a.frames);
    let record = |m: &Model| {
        let bodies = m.bodies();
        Frame {
            x: bodies
                .iter()
                .flat_map(|b| (0..b.len()).map(|i| b.world_position(i).as_vec3()))
                .collect(),
            stretch: mean_stretch(&bodies),
        }
    };
    frames.push(record(&model));
    let mut diverged = None;
    while frames.len() < a.frames {
        if let Err(e) = model.step() {
            diverged = Some(e);
            break;
        }
        frames.push(record(&model));
    }
    let bodies = model.bodies();
    let (mut faces_all, mut face_body, mut edges) = (Vec::new(), Vec::new(), Vec::new());
    let mut offset = 0u32;
    for (k, b) in bodies.iter().enumerate() {
        let f = faces(b);
        if f.is_empty() {
            for &[i, j] in &b.constraints().distance.pairs {
                edges.push(([i + offset, j + offset], k));
            }
        } else {
            face_body.extend(std::iter::repeat_n(k, f.len()));
            faces_all.extend(f.iter().map(|t| t.map(|v| v + offset)));
        }
        offset += b.len() as u32;
    }
    let shapes = colliders(&bodies);
    let mut statics: Vec<[Vec3; 3]> = shapes
        .iter()
        .filter_map(|c| shape_triangles(&c.shape))
        .flatten()
        .collect();
    statics.extend(model.meshes());
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    let points = frames.iter().flat_map(|f| f.x.iter());
    for p in points.chain(statics.iter().flatten()) {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    let ground_y = shapes
        .iter()
        .filter_map(|c| ground_height(&c.shape))
        .reduce(f32::min);
    if let Some(y) = ground_y {
        lo.y = lo.y.min(y);
    }
    let pad = 0.15 * (hi - lo).max_element().max(0.1);
    let ground = ground_y.map(|y| (y, lo - Vec3::splat(pad), hi + Vec3::splat(pad)));
    let size = (a.width, a.height);
    let what = scene_label(a, n, &bodies);
    let vertices: usize = bodies.iter().map(|b| b.len()).sum();
    let s3 = Scene3d {
        faces: faces_all,
        face_body,
        edges,
        statics,
        camera: Camera::framing(lo, hi, size),
        ground,
        caption: format!(
            "{what}, {vertices} vertices, {}, {} it x {} sub",
            a.solver, a.passes.iterations, a.passes.substeps
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

/// What a picture of `a` shows: [`body_label`] for a single body; for a world its name, its
/// size where it has one, and its bodies (a `bodies` world's by their files).
fn scene_label(a: &RenderArgs, n: usize, bodies: &[&Body]) -> String {
    let file = |p: &PathBuf| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    match a.scene {
        StepSceneArg::Drape => format!("drape n={n}, {} body", bodies.len()),
        StepSceneArg::Character => format!("character n={n}: cape and skirt on a body proxy"),
        StepSceneArg::Bodies => {
            let names: Vec<String> = a.mesh.iter().map(file).collect();
            format!("bodies: {}", names.join(" + "))
        }
        s if s.body().is_none() => format!("{s}, {} bodies", bodies.len()),
        s => body_label(s.name(), n, a.mesh.first().map(|p| p.as_path()), bodies[0]),
    }
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
