//! The README's "Bad input" tables, checked against reality: every row names a case this file
//! produces, and the message (or outcome) quoted in the row must appear in what the code says.
//! Extreme but valid parameters are run here too, and their outcome is what the README states.

mod common;

use common::hit_on;
use solver_core::constraints::Drag;
use solver_core::glam::Vec3;
use solver_core::interaction::picking::grab;
use solver_core::mesh::repair::{parse_obj_repaired, repair, MeshOptions};
use solver_core::mesh::TriMesh;
use solver_core::{
    figures, step, DistanceConstraints, GaussSeidel, Particles, StepParams, Stiffness, WobbleError,
};
use std::collections::BTreeMap;
use std::path::Path;

const QUAD: &str = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\n";

/// What loading `text` says: the error, or the repair report's warning.
fn load(text: &[u8], strict: bool) -> String {
    let options = MeshOptions::default().strict(strict);
    match parse_obj_repaired(text, Path::new("mesh.obj"), &options) {
        Ok((_, report)) => report.to_string(),
        Err(e) => e.to_string(),
    }
}

fn both(text: &str) -> Vec<String> {
    vec![load(text.as_bytes(), false), load(text.as_bytes(), true)]
}

fn err<T: std::fmt::Debug>(r: Result<T, WobbleError>) -> String {
    r.unwrap_err().to_string()
}

fn step_error(params: StepParams) -> String {
    let mut body = scenes::cloth(4).unwrap();
    err(step(&mut body, &params, &mut GaussSeidel::new(), None))
}

/// Every case of the first table: its messages with default loading and in strict mode (one
/// message where the mode does not apply).
fn bad_input_cases() -> BTreeMap<&'static str, Vec<String>> {
    let mut m = BTreeMap::new();
    m.insert(
        "obj-non-finite",
        both("v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n"),
    );
    m.insert(
        "obj-index-out-of-range",
        both("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n"),
    );
    m.insert(
        "obj-index-zero",
        both("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"),
    );
    m.insert(
        "obj-not-a-number",
        both("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n"),
    );
    m.insert("obj-short-face", both("v 0 0 0\nv 1 0 0\nf 1 2\n"));
    m.insert(
        "obj-other-syntax",
        both("v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 x 1\nf 1 2 3\n"),
    );
    m.insert("obj-empty", both(""));
    m.insert("obj-no-faces", both("v 0 0 0\nv 1 0 0\n"));
    m.insert(
        "obj-binary",
        vec![
            load(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0], false),
            load(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0], true),
        ],
    );
    m.insert(
        "obj-not-utf8",
        vec![
            load(&[b'v', b' ', 0xff, 0xfe], false),
            load(&[b'v', b' ', 0xff, 0xfe], true),
        ],
    );
    // The quad's four vertices, then what spoils it.
    for (case, rest) in [
        ("duplicate-vertex", "v 0 0 0\nf 1 2 3\nf 5 3 4\n"),
        ("zero-area-triangle", "f 1 2 3\nf 1 3 4\nf 1 2 2\n"),
        ("duplicate-triangle", "f 1 2 3\nf 1 3 4\nf 3 1 4\n"),
        ("unused-vertex", "v 5 5 5\nf 1 2 3\nf 1 3 4\n"),
    ] {
        m.insert(case, both(&format!("{QUAD}{rest}")));
    }
    m.insert(
        "non-manifold-edge",
        both("v 0 0 0\nv 1 0 0\nv 0.5 1 0\nv 0.5 0 1\nv 0.5 -1 0\nf 1 2 3\nf 2 1 4\nf 1 2 5\n"),
    );
    m.insert(
        "huge-coordinates",
        both("v -3e38 0 0\nv 3e38 0 0\nv 0 3e38 0\nf 1 2 3\n"),
    );
    let quad = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.0, 1.0)];
    m.insert(
        "weld-tolerance",
        vec![err(repair(
            &quad,
            &[[0u32, 1, 2]],
            &MeshOptions::default().weld_tolerance(-1.0),
        ))],
    );
    m.insert(
        "mass-zero",
        vec![err(Particles::new(&[Vec3::ZERO, Vec3::X], &[1.0, 0.0]))],
    );
    m.insert(
        "mass-negative",
        vec![err(Particles::new(&[Vec3::ZERO], &[-2.0]))],
    );
    let coincident = Particles::new(&[Vec3::ONE, Vec3::ONE], &[1.0, 1.0]).unwrap();
    m.insert(
        "zero-length-constraint",
        vec![err(DistanceConstraints::default().push_rest(
            &coincident.x(),
            0,
            1,
            0.0,
        ))],
    );
    m.insert(
        "repeated-particle",
        vec![err(DistanceConstraints::default().push(3, 3, 1.0, 0.0))],
    );
    m.insert(
        "triangle-mesh-degenerate",
        vec![err(TriMesh::new(
            vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0],
            vec![[0, 1, 2]],
        ))],
    );
    let d = StepParams::default();
    m.insert("dt-zero", vec![step_error(StepParams { dt: 0.0, ..d })]);
    m.insert("dt-nan", vec![step_error(StepParams { dt: f32::NAN, ..d })]);
    m.insert(
        "iterations-zero",
        vec![step_error(StepParams { iterations: 0, ..d })],
    );
    m.insert(
        "substeps-huge",
        vec![step_error(StepParams {
            substeps: 100_001,
            ..d
        })],
    );
    m.insert("scene-too-small", vec![err(scenes::cloth(1))]);
    let mut body = scenes::cloth(4).unwrap();
    let mut gs = GaussSeidel::new();
    step(&mut body, &d, &mut gs, None).unwrap();
    body.particles_mut().force_mut()[7].z = f32::NAN;
    m.insert(
        "non-finite-force",
        vec![err(step(&mut body, &d, &mut gs, None))],
    );
    m.insert(
        "dt-too-large",
        vec![step_error(StepParams { dt: 10.0, ..d })],
    );
    let spoilt = |spoil: &dyn Fn(&mut solver_core::Body)| {
        let mut body = scenes::cloth(4).unwrap();
        let mut gs = GaussSeidel::new();
        step(&mut body, &d, &mut gs, None).unwrap();
        spoil(&mut body);
        vec![err(step(&mut body, &d, &mut gs, None))]
    };
    m.insert(
        "non-finite-position",
        spoilt(&|b| b.particles_mut().x_mut()[6].y = f32::NAN),
    );
    m.insert(
        "non-finite-velocity",
        spoilt(&|b| b.particles_mut().v_mut()[6].x = f32::INFINITY),
    );
    m.insert(
        "negative-inverse-mass",
        spoilt(&|b| b.particles_mut().x_mut()[6].w = -1.0),
    );
    m.insert("non-finite-pin-target", {
        let mut body = scenes::cloth(4).unwrap();
        let a = body.attach(3).unwrap();
        vec![err(body.move_attachment(a, Vec3::new(0.0, 0.0, f32::NAN)))]
    });
    m.insert(
        "non-finite-drag-target",
        spoilt(&|b| {
            let hit = hit_on(b, 0, [0.5, 0.25, 0.25]);
            grab(b, &hit, 0.0).unwrap();
            let drag = b
                .constraints_mut()
                .extra
                .iter_mut()
                .find_map(|k| k.as_any_mut().downcast_mut::<Drag>())
                .unwrap();
            drag.targets[0].x = f32::NAN;
        }),
    );
    // Pins released, so that the constraints cannot hand the momentum to them.
    let mut body = scenes::cloth(4).unwrap();
    for i in [0, 3] {
        body.particles_mut().set_mass(i, 1.0 / 16.0).unwrap();
    }
    body.particles_mut().force_mut()[5].x = 1e9;
    m.insert(
        "speed-above-bound",
        vec![err(step(&mut body, &d, &mut GaussSeidel::new(), None))],
    );
    m
}

/// A cloth (n = 8, the docs/SCENES.md cloth) run with extreme parameters.
struct Extreme {
    params: StepParams,
    compliance: f32,
    /// Mass of every free particle, when not the scene's 1/n².
    mass: Option<f32>,
    steps: usize,
    /// The largest stretch (over all steps) that still counts as stable.
    stretch_bound: f32,
}

/// Runs the case: `stable: ...` when every step succeeds, the state stays finite, within 3 m of
/// the origin, and the max stretch stays under the bound; otherwise what went wrong.
fn run_extreme(e: &Extreme) -> String {
    let mut body = scenes::cloth(8).unwrap();
    body.constraints_mut().distance.set_compliance(e.compliance);
    if let Some(m) = e.mass {
        for i in 0..body.len() {
            if body.particles().mass()[i] > 0.0 {
                if let Err(err) = body.particles_mut().set_mass(i, m) {
                    return err.to_string();
                }
            }
        }
    }
    let mut gs = GaussSeidel::new();
    let mut worst = 0.0f32;
    for s in 0..e.steps {
        if let Err(err) = step(&mut body, &e.params, &mut gs, None) {
            return err.to_string();
        }
        let far = body
            .particles()
            .x()
            .iter()
            .any(|p| p.xyz().abs().max_element() > 3.0);
        if !figures::all_finite(&body) || far {
            return format!("unstable: left the 3 m box at step {s}");
        }
        worst = worst.max(figures::stretch(&body).1);
    }
    if worst < e.stretch_bound {
        format!(
            "stable: finite, max stretch < {} over {} steps",
            e.stretch_bound, e.steps
        )
    } else {
        format!("unstable: max stretch {worst} over {} steps", e.steps)
    }
}

fn extreme_cases() -> BTreeMap<&'static str, Vec<String>> {
    let d = StepParams::default();
    let case = |params, compliance, mass, steps, stretch_bound| {
        vec![run_extreme(&Extreme {
            params,
            compliance,
            mass,
            steps,
            stretch_bound,
        })]
    };
    let mut m = BTreeMap::new();
    m.insert(
        "dt-1/10",
        case(StepParams { dt: 0.1, ..d }, 0.0, None, 300, 0.5),
    );
    m.insert(
        "dt-1/10-substeps-6",
        case(
            StepParams {
                dt: 0.1,
                substeps: 6,
                ..d
            },
            0.0,
            None,
            300,
            0.25,
        ),
    );
    m.insert("compliance-1e-9", case(d, 1e-9, None, 300, 0.25));
    m.insert("mass-1e-9", case(d, 0.0, Some(1e-9), 300, 0.25));
    m.insert(
        "iterations-1000",
        case(
            StepParams {
                iterations: 1000,
                ..d
            },
            0.0,
            None,
            30,
            0.25,
        ),
    );
    m.insert(
        "all-at-once",
        case(
            StepParams {
                dt: 0.1,
                iterations: 1000,
                ..d
            },
            1e-9,
            Some(1e-9),
            30,
            0.25,
        ),
    );
    m.insert(
        "pbd-stiffness-1e9",
        case(
            StepParams {
                stiffness: Stiffness::Pbd {
                    k: 1e9,
                    iteration_corrected: false,
                },
                ..d
            },
            0.0,
            None,
            1,
            1.0,
        ),
    );
    m.insert(
        "dt-1e-25",
        case(StepParams { dt: 1e-25, ..d }, 0.0, None, 1, 1.0),
    );
    m.insert(
        "dt-1e20",
        case(StepParams { dt: 1e20, ..d }, 0.0, None, 1, 1.0),
    );
    m
}

/// The rows of the README table whose header line starts with `header`: (case, cells after
/// the first two).
fn readme_rows(header: &str) -> Vec<(String, Vec<String>)> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Bad input"))
        .expect("README has a '## Bad input' section");
    let mut lines = section.lines().skip_while(|l| !l.starts_with(header));
    lines.next().expect("table header");
    lines
        .skip(1) // the |---| line
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<String> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            (cells[0].trim_matches('`').to_string(), cells[2..].to_vec())
        })
        .collect()
}

/// The text between the first pair of backticks of a cell.
fn quoted(cell: &str) -> Option<&str> {
    let start = cell.find('`')? + 1;
    let len = cell[start..].find('`')?;
    Some(&cell[start..start + len])
}

fn check_table(header: &str, cases: BTreeMap<&'static str, Vec<String>>) {
    let rows = readme_rows(header);
    let mut problems = Vec::new();
    for (case, cells) in &rows {
        let Some(actual) = cases.get(case.as_str()) else {
            problems.push(format!(
                "README row '{case}' has no case in tests/bad_input.rs"
            ));
            continue;
        };
        for (k, cell) in cells.iter().enumerate() {
            match (quoted(cell), actual.get(k)) {
                (Some(want), Some(got)) if got.contains(want) => {}
                (None, Some(got)) if cell.starts_with("same") && Some(got) == actual.first() => {}
                (None, None) if cell == "—" => {}
                _ => problems.push(format!(
                    "row '{case}', column {}: README says {cell:?}, code says {:?}",
                    k + 3,
                    actual.get(k)
                )),
            }
        }
    }
    for case in cases.keys() {
        if !rows.iter().any(|(c, _)| c == case) {
            problems.push(format!("case '{case}' has no README row"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_readme_bad_input_table_matches_the_messages() {
    check_table("| case | input |", bad_input_cases());
}

#[test]
fn the_readme_extreme_parameter_table_matches_what_runs() {
    check_table("| case | parameters |", extreme_cases());
}

/// Prints every case's actual text, to write README rows from (not a check).
#[test]
#[ignore = "prints the messages; run with --ignored --nocapture"]
fn print_messages() {
    for (case, msgs) in bad_input_cases().into_iter().chain(extreme_cases()) {
        println!("{case}:");
        for m in msgs {
            println!("    {m}");
        }
    }
}
