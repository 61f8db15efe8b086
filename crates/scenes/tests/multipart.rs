//! Meshes of several parts in the `mesh FILE` scene (docs/SCENES.md): the parts of one file
//! collide with each other, and intersections present at load do not grow. Each test sets up a
//! small scene, steps it (dt 1/60) and checks
//! what a player would see (the settings are [`run`]'s).

use glam::Vec3;
use scenes::{mesh_parts_world, mesh_scene_with, parts_world};
use solver_core::figures::{intersecting_triangle_pairs, winding_number, Surface};
use solver_core::mesh::repair::MeshOptions;
use solver_core::mesh::shapes::icosphere;
use solver_core::mesh::TriMesh;
use solver_core::{StepParams, World};
use std::path::{Path, PathBuf};

/// The surface of a box from `lo` to `hi`, `k` x `k` quads per face, outward.
fn closed_box(lo: Vec3, hi: Vec3, k: usize) -> TriMesh {
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    // Each face: an origin corner and two edge vectors whose cross product points outward.
    let d = hi - lo;
    let faces = [
        (lo, Vec3::new(0.0, d.y, 0.0), Vec3::new(d.x, 0.0, 0.0)),
        (lo, Vec3::new(d.x, 0.0, 0.0), Vec3::new(0.0, 0.0, d.z)),
        (lo, Vec3::new(0.0, 0.0, d.z), Vec3::new(0.0, d.y, 0.0)),
        (hi, Vec3::new(-d.x, 0.0, 0.0), Vec3::new(0.0, -d.y, 0.0)),
        (hi, Vec3::new(0.0, 0.0, -d.z), Vec3::new(-d.x, 0.0, 0.0)),
        (hi, Vec3::new(0.0, -d.y, 0.0), Vec3::new(0.0, 0.0, -d.z)),
    ];
    for (o, u, v) in faces {
        let base = positions.len() as u32;
        for j in 0..=k {
            for i in 0..=k {
                positions.push(o + u * (i as f32 / k as f32) + v * (j as f32 / k as f32));
            }
        }
        let at = |i: usize, j: usize| base + (j * (k + 1) + i) as u32;
        for j in 0..k {
            for i in 0..k {
                triangles.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                triangles.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
    }
    let (welded, _) = TriMesh {
        positions,
        triangles,
    }
    .weld(1e-6 * d.length());
    welded
}

/// A closed cylinder along `axis` (unit) from `base`, radius `r`, length `len`, `seg` sides,
/// `rings` rings along it, outward.
fn cylinder(base: Vec3, axis: Vec3, r: f32, len: f32, seg: usize, rings: usize) -> TriMesh {
    let u = axis.any_orthonormal_vector();
    let v = axis.cross(u);
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for ring in 0..=rings {
        let c = base + axis * (len * ring as f32 / rings as f32);
        for s in 0..seg {
            let a = std::f32::consts::TAU * s as f32 / seg as f32;
            positions.push(c + (u * a.cos() + v * a.sin()) * r);
        }
    }
    let at = |ring: usize, s: usize| (ring * seg + s % seg) as u32;
    for ring in 0..rings {
        for s in 0..seg {
            triangles.push([at(ring, s), at(ring, s + 1), at(ring + 1, s + 1)]);
            triangles.push([at(ring, s), at(ring + 1, s + 1), at(ring + 1, s)]);
        }
    }
    let bottom = positions.len() as u32;
    positions.push(base);
    let top = positions.len() as u32;
    positions.push(base + axis * len);
    for s in 0..seg {
        triangles.push([bottom, at(0, s + 1), at(0, s)]);
        triangles.push([top, at(rings, s), at(rings, s + 1)]);
    }
    TriMesh {
        positions,
        triangles,
    }
}

/// The parts `parts` as one mesh, in order.
fn joined(parts: &[TriMesh]) -> TriMesh {
    let mut out = TriMesh::default();
    for p in parts {
        let base = out.positions.len() as u32;
        out.positions.extend(&p.positions);
        out.triangles
            .extend(p.triangles.iter().map(|t| t.map(|v| v + base)));
    }
    out
}

/// Teapot-like: a pot (cylinder r 0.3 m, 0.4 m tall), a lid wider than the pot resting 1 cm
/// into its rim, and a spout leaning out of its side with its inner end 3 cm into the wall.
fn teapot() -> TriMesh {
    let pot = cylinder(Vec3::ZERO, Vec3::Y, 0.3, 0.4, 24, 1);
    let lid = cylinder(Vec3::new(0.0, 0.39, 0.0), Vec3::Y, 0.33, 0.06, 24, 1);
    let axis = Vec3::new(1.0, 0.8, 0.0).normalize();
    let spout = cylinder(Vec3::new(0.27, 0.18, 0.0), axis, 0.05, 0.3, 10, 1);
    joined(&[pot, lid, spout])
}

/// Two spheres of radius 0.2 m (two subdivisions) overlapping by a fifth of their diameter.
fn overlapping_spheres() -> TriMesh {
    let a = icosphere(Vec3::ZERO, 0.2, 2).unwrap();
    let b = icosphere(Vec3::new(0.32, 0.05, 0.0), 0.2, 2).unwrap();
    joined(&[a, b])
}

/// Three boxes stacked, each smaller than the one below and sunk 1 cm into it.
fn stacked_boxes() -> TriMesh {
    let a = closed_box(Vec3::ZERO, Vec3::new(0.6, 0.2, 0.6), 1);
    let b = closed_box(Vec3::new(0.1, 0.19, 0.1), Vec3::new(0.5, 0.39, 0.5), 1);
    let c = closed_box(Vec3::new(0.2, 0.38, 0.2), Vec3::new(0.4, 0.58, 0.4), 1);
    joined(&[a, b, c])
}

/// The three test meshes by name, as OBJ files under `tests/data/`.
/// A test mesh's name and its generator.
type Named = (&'static str, fn() -> TriMesh);

const MESHES: [Named; 3] = [
    ("teapot_parts", teapot),
    ("overlapping_spheres", overlapping_spheres),
    ("stacked_boxes", stacked_boxes),
];

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{name}.obj"))
}

fn obj_text(mesh: &TriMesh) -> String {
    let mut s = String::new();
    for p in &mesh.positions {
        s += &format!("v {} {} {}\n", p.x, p.y, p.z);
    }
    for t in &mesh.triangles {
        s += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    s
}

/// The OBJ files `wobble step --mesh` measures are these generators' output (with
/// `WRITE_TEST_MESHES=1` the test writes them).
#[test]
fn test_mesh_files_are_the_generated_meshes() {
    for (name, make) in MESHES {
        let text = obj_text(&make());
        if std::env::var_os("WRITE_TEST_MESHES").is_some() {
            std::fs::write(data(name), &text).unwrap();
        }
        assert_eq!(std::fs::read_to_string(data(name)).unwrap(), text, "{name}");
    }
}

/// The world of a test mesh file as `wobble step --scene mesh` builds it.
fn load(name: &str) -> World {
    let (world, _) = mesh_parts_world(&data(name), &MeshOptions::default())
        .unwrap()
        .expect("several parts");
    world
}

/// The step settings each test runs at: `wobble step`'s default (1 substep of 8 iterations)
/// and that of solver-core's `stack` world test (8 substeps of 10 iterations).
const SETTINGS: [(usize, usize); 2] = [(1, 8), (8, 10)];

/// How much faster a part's centre may rise (m/s) than it does when the parts are dropped
/// apart ([`apart`]: the jelly spheres bounce off the ground either way), per part below it:
/// the world's default `depenetration_speed`, the most its contacts push a part out of
/// another beyond following it (three boxes each sunk into the one below separate at that
/// speed pair by pair, so the top one may rise at twice it). Undoing a centimetre of overlap
/// in one of 8 substeps would be 4.8 m/s.
const EXTRA_RISE_PER_PART: f32 = 0.5;

/// The world of mesh file `name` with its parts moved apart along x (10 cm between their
/// boxes), each at its height in the file: what the parts do without touching.
fn apart(name: &str) -> World {
    let world = load(name);
    let mut x = 0.0;
    let mut moved = Vec::new();
    for b in world.bodies() {
        let body = b.body();
        let mut part = TriMesh {
            positions: body
                .particles()
                .x()
                .iter()
                .map(|p| p.xyz() + body.origin().as_vec3())
                .collect(),
            triangles: body.topology().triangles.clone(),
        };
        let (lo, hi) = part.bounds();
        part.positions.iter_mut().for_each(|p| p.x += x - lo.x);
        x += hi.x - lo.x + 0.1;
        moved.push(part);
    }
    parts_world(&joined(&moved))
        .unwrap()
        .expect("several parts")
}

/// The largest rise [`run`] allows for mesh `name` at `settings`: the parts' rise when apart
/// plus [`EXTRA_RISE_PER_PART`] for each part but one.
fn max_rise(name: &str, settings: (usize, usize)) -> f32 {
    let mut world = apart(name);
    let extra = EXTRA_RISE_PER_PART * (world.len() - 1) as f32;
    run(&mut world, 4.0, settings) + extra
}

/// Steps `world` for `seconds` at `substeps` x `iterations` (dt 1/60); returns the fastest
/// any body's centre rose over one step (m/s): the parts are dropped, so a fast rise is a
/// part launched by the contacts that separate it from another.
fn run(world: &mut World, seconds: f32, (substeps, iterations): (usize, usize)) -> f32 {
    let params = StepParams {
        substeps,
        iterations,
        ..Default::default()
    };
    let centres = |w: &World| -> Vec<Vec3> {
        w.bodies()
            .map(|b| centroid(&b.body().particles().x()) + b.body().origin().as_vec3())
            .collect()
    };
    let mut fastest = 0.0f32;
    let mut before = centres(world);
    for _ in 0..(seconds / params.dt).round() as usize {
        world.step(&params).unwrap();
        let after = centres(world);
        for (a, b) in before.iter().zip(&after) {
            fastest = fastest.max((b.y - a.y) / params.dt);
        }
        before = after;
    }
    fastest
}

fn pairs(world: &World) -> u64 {
    let surfaces: Vec<Surface> = world
        .bodies()
        .map(|b| {
            (
                &b.body().topology().triangles[..],
                &b.body().particles().x()[..],
            )
        })
        .collect();
    intersecting_triangle_pairs(&surfaces).unwrap()
}

fn centroid(x: &[solver_core::Packed4]) -> Vec3 {
    x.iter().map(|p| p.xyz()).sum::<Vec3>() / x.len() as f32
}

/// The lid stays on the pot (its centre above the pot's highest point) and the spout, a loose
/// part whose end starts 3 cm into the pot's wall, ends outside the pot (no spout vertex
/// inside it).
#[test]
fn teapot_lid_stays_on_pot_and_spout_outside_it() {
    for settings in SETTINGS {
        let mut world = load("teapot_parts");
        assert_eq!(world.len(), 3);
        let rise = run(&mut world, 4.0, settings);
        let most = max_rise("teapot_parts", settings);
        assert!(
            rise <= most,
            "{settings:?}: a part rose at {rise} m/s (at most {most})"
        );
        let b: Vec<_> = world.bodies().map(|b| b.body()).collect();
        let (pot, lid, spout) = (b[0], b[1], b[2]);
        let rim = pot
            .particles()
            .x()
            .iter()
            .map(|p| p.y)
            .fold(f32::MIN, f32::max);
        let lid_centre = centroid(&lid.particles().x());
        assert!(
            lid_centre.y > rim,
            "{settings:?}: lid centre at y = {}, rim at {rim}",
            lid_centre.y
        );
        let pot_tris = &pot.topology().triangles;
        let inside = spout
            .particles()
            .x()
            .iter()
            .filter(|p| winding_number(pot_tris, &pot.particles().x(), p.xyz()) > 0.5)
            .count();
        assert_eq!(inside, 0, "{settings:?}: spout vertices inside the pot");
    }
}

/// Intersecting triangle pairs after 4 s are no more than at load, for each test mesh.
#[test]
fn intersections_at_load_do_not_grow() {
    for (name, _) in MESHES {
        for settings in SETTINGS {
            let mut world = load(name);
            let at_load = pairs(&world);
            assert!(at_load > 0, "{name} intersects at load");
            let rise = run(&mut world, 4.0, settings);
            let after = pairs(&world);
            eprintln!(
                "{name} {settings:?}: {at_load} intersecting pairs at load, {after} after 4 s"
            );
            assert!(
                after <= at_load,
                "{name} {settings:?}: {at_load} pairs at load, {after} after 4 s"
            );
            let most = max_rise(name, settings);
            assert!(
                rise <= most,
                "{name} {settings:?}: a part rose at {rise} m/s (at most {most})"
            );
            for b in world.bodies() {
                assert!(solver_core::figures::all_finite(b.body()), "{name}");
            }
        }
    }
}

/// The stacked boxes stay stacked: each box's centre stays above the one below's.
#[test]
fn stacked_parts_stay_stacked() {
    for settings in SETTINGS {
        let mut world = load("stacked_boxes");
        let rise = run(&mut world, 4.0, settings);
        let ys: Vec<f32> = world
            .bodies()
            .map(|b| centroid(&b.body().particles().x()).y + b.body().origin().y as f32)
            .collect();
        assert!(
            ys[0] < ys[1] && ys[1] < ys[2],
            "{settings:?}: centres at y = {ys:?}"
        );
        let box_height = 0.2;
        assert!(
            ys[2] - ys[0] > 1.5 * box_height,
            "{settings:?}: centres at y = {ys:?}"
        );
        let most = max_rise("stacked_boxes", settings);
        assert!(
            rise <= most,
            "{settings:?}: a box rose at {rise} m/s (at most {most})"
        );
    }
}

/// A mesh of one part is the one-body scene as before: no world, the same body.
#[test]
fn single_part_mesh_is_one_body_as_before() {
    let sphere = icosphere(Vec3::ZERO, 0.3, 2).unwrap();
    assert!(parts_world(&sphere).unwrap().is_none());
    let dir = std::env::temp_dir().join(format!("wobble-multipart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sphere.obj");
    std::fs::write(&path, obj_text(&sphere)).unwrap();
    assert!(mesh_parts_world(&path, &MeshOptions::default())
        .unwrap()
        .is_none());
    let (body, _) = mesh_scene_with(&path, &MeshOptions::default()).unwrap();
    assert_eq!(body.len(), sphere.positions.len());
    assert!(body.topology().closed);
    std::fs::remove_dir_all(&dir).unwrap();
}
