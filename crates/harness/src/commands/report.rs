//! `wobble report [--quick]`: the main job. Runs converge, scale, cache, substeps, claims,
//! tethers, bodies, gpu (the GPU backend against the CPU; it says plainly when no adapter exists, and
//! times nothing on a software adapter) and render with defaults sized for a 2-core machine (aimed
//! at about 10 minutes, `--quick` at under a minute on smaller sizes; the first line of REPORT.md
//! says how long the run took) and writes REPORT.md linking every plot and CSV, with the machine it ran
//! on. A part that fails is reported in REPORT.md and the others still run; the command then
//! exits non-zero.

use crate::commands::bodies::BodiesArgs;
use crate::commands::cache::CacheArgs;
use crate::commands::claims::ClaimsArgs;
use crate::commands::converge::ConvergeArgs;
use crate::commands::gpu::GpuArgs;
use crate::commands::render::RenderArgs;
use crate::commands::scale::ScaleArgs;
use crate::commands::substeps::SubstepsArgs;
use crate::commands::tethers::TethersArgs;
use crate::measure::machine;
use crate::measure::sweep::Budget;
use crate::output::section::{rel, Section};
use crate::setup::{
    check_solvers, BackendArg, Common, Error, OrderingArg, Passes, SceneArg, SolverArg,
    StepSceneArg, ALL_SOLVERS,
};
use clap::Args;
use std::path::Path;
use std::time::Instant;

/// Arguments of `wobble report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Small sizes and short runs, aimed at under a minute on 2 cores.
    #[arg(long)]
    pub quick: bool,
    /// Solvers to compare, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = ALL_SOLVERS)]
    pub solvers: Vec<SolverArg>,
    /// Do not build an x86-64-v3 binary for cachegrind (full mode builds one when needed).
    #[arg(long)]
    pub no_build: bool,
    /// The solvers' tuning and the output directory.
    #[command(flatten)]
    pub common: Common,
}

/// The parts of a report with their arguments.
pub struct Plan {
    /// `converge`.
    pub converge: ConvergeArgs,
    /// `scale`.
    pub scale: ScaleArgs,
    /// `cache`.
    pub cache: CacheArgs,
    /// `substeps`.
    pub substeps: SubstepsArgs,
    /// `claims`.
    pub claims: ClaimsArgs,
    /// `render`: cloth, jelly, then the `stack` world.
    pub render: Vec<RenderArgs>,
    /// `tethers`.
    pub tethers: TethersArgs,
    /// `gpu`: the GPU backend against the CPU, when an adapter exists.
    pub gpu: GpuArgs,
    /// `bodies`: the `crowd` world, its jellies in their hammocks and apart.
    pub bodies: BodiesArgs,
}

/// The arguments every part gets in full or quick mode.
pub fn plan(a: &ReportArgs) -> Plan {
    let q = a.quick;
    let common = a.common.clone();
    let (out, tuning) = (&common.out, &common.tuning);
    // A text setting: its quick value in quick mode, its full one otherwise.
    let by_mode = |quick: &str, full: &str| String::from(if q { quick } else { full });
    let converge = ConvergeArgs {
        scene: SceneArg::Cloth,
        n: if q { 12 } else { 23 },
        mesh: None,
        solvers: a.solvers.clone(),
        iters: if q { 20 } else { 50 },
        warm: 10,
        reps: 3,
        stretch_iters: by_mode("1,4,16", "1,2,4,8,16,32"),
        stretch_steps: if q { 60 } else { 120 },
        threads: 1,
        backend: BackendArg::Cpu,
        ordering: OrderingArg::Natural,
        common: common.clone(),
    };
    let scale = ScaleArgs {
        scene: SceneArg::Cloth,
        sizes: by_mode("8,16,23,32,64", "16,23,32,45,64,128,256,512"),
        solvers: a.solvers.clone(),
        iters: 8,
        substeps: 1,
        threads: "1,2".into(),
        ordering: OrderingArg::Natural,
        backend: vec![BackendArg::Cpu],
        budget: if q {
            Budget {
                steps: 30,
                min_steps: 3,
                warmup: 5,
                target_s: 0.05,
                timeout_s: 20.0,
                budget_s: 15.0,
            }
        } else {
            Budget {
                // docs/SCENES.md's 100 steps after 20 warm-up steps, as many as fit in
                // target_s per point.
                steps: 100,
                min_steps: 5,
                warmup: 20,
                target_s: 0.25,
                timeout_s: 60.0,
                budget_s: 90.0,
            }
        },
        common: common.clone(),
    };
    let cache = CacheArgs {
        scene: SceneArg::Cloth,
        sizes: by_mode("20,26,32", "20,22,23,24,26,28,30,32,35"),
        // Up to 1024 (a million vertices): the frame time from a game cloth to a million
        // vertices is what this part is for; scale stops at 512 instead.
        large: by_mode("64", "64,128,256,512,1024"),
        orderings: OrderingArg::ALL.to_vec(),
        // Every ordering under cachegrind at 128 x 128 would not fit the report's time.
        cachegrind_orderings: if q {
            vec![OrderingArg::Natural]
        } else {
            vec![OrderingArg::Natural, OrderingArg::Shuffled]
        },
        solvers: vec![SolverArg::Gs, SolverArg::Colored, SolverArg::Jacobi],
        iters: 8,
        cachegrind_sizes: by_mode("23", "23,32,128"),
        cachegrind_steps: by_mode("3,10", "10,30"),
        cachegrind_bin: None,
        build_cachegrind_bin: !q && !a.no_build,
        no_cachegrind: false,
        // The scale sweep's steps and timeouts, aiming at shorter timings in less time.
        budget: Budget {
            target_s: if q { 0.05 } else { 0.15 },
            budget_s: if q { 10.0 } else { 75.0 },
            ..scale.budget.clone()
        },
        common: common.clone(),
    };
    let substeps = SubstepsArgs {
        scene: SceneArg::Cloth,
        n: if q { 16 } else { 32 },
        mesh: None,
        solvers: vec![SolverArg::Gs],
        totals: by_mode("8,16", "8,16,30"),
        steps: if q { 40 } else { 120 },
        threads: 1,
        common: common.clone(),
    };
    let claims = ClaimsArgs {
        quick: q,
        only: None,
        solvers: a.solvers.clone(),
        build_cachegrind_bin: !q && !a.no_build,
        tuning: tuning.clone(),
        out: out.clone(),
        verify: None,
    };
    // Two bodies and one world: the stack's three blocks, each in its colour.
    let pictures = [
        StepSceneArg::Cloth,
        StepSceneArg::Jelly,
        StepSceneArg::Stack,
    ];
    let render = pictures
        .iter()
        .map(|&s| RenderArgs {
            scene: s,
            n: Some(match (s, q) {
                (StepSceneArg::Cloth, true) => 12,
                (StepSceneArg::Cloth, false) => 32,
                (StepSceneArg::Jelly, true) => 2,
                (StepSceneArg::Jelly, false) => 3,
                _ => 0,
            }),
            mesh: Vec::new(),
            no_self_collision: false,
            solver: SolverArg::Gs,
            passes: Passes {
                iterations: 8,
                substeps: 1,
            },
            frames: if q { 24 } else { 120 },
            width: if q { 320 } else { 640 },
            height: if q { 240 } else { 480 },
            stills: if q { 2 } else { 4 },
            out: out.clone(),
        })
        .collect();
    let tethers = TethersArgs {
        n: if q { 16 } else { 32 },
        solvers: vec![SolverArg::Gs, SolverArg::Colored],
        iterations: 8,
        steps: if q { 60 } else { 120 },
        out: out.clone(),
    };
    let gpu = GpuArgs {
        sizes: by_mode("16,32", "32,128,512,1024"),
        solvers: vec![SolverArg::Colored, SolverArg::Jacobi, SolverArg::Chebyshev],
        iters: 8,
        threads: "1,2".into(),
        allow_software: false,
        budget: Budget {
            budget_s: if q { 15.0 } else { 200.0 },
            ..scale.budget.clone()
        },
        tuning: tuning.clone(),
        out: out.join("gpu"),
    };
    let bodies = BodiesArgs {
        solver: SolverArg::Gs,
        iterations: 8,
        substeps: 1,
        threads: "1,2".into(),
        apart: false,
        warmup: if q { 10 } else { 30 },
        rounds: if q { 5 } else { 20 },
        turn: 4,
        json: false,
    };
    Plan {
        bodies,
        gpu,
        converge,
        scale,
        cache,
        substeps,
        claims,
        render,
        tethers,
    }
}

fn timed(
    name: &str,
    f: impl FnOnce() -> Result<Section, Error>,
) -> (String, f64, Result<Section, Error>) {
    let t0 = Instant::now();
    let r = f();
    (name.to_string(), t0.elapsed().as_secs_f64(), r)
}

/// `wobble report`.
pub fn run(a: &ReportArgs) -> Result<Section, Error> {
    check_solvers(&a.solvers)?;
    a.common.tuning.check()?;
    std::fs::create_dir_all(&a.common.out).map_err(|e| crate::setup::io_error(&a.common.out, e))?;
    let t0 = Instant::now();
    let machine = machine::probe();
    let p = plan(a);
    let mut parts = vec![
        timed("converge", || crate::commands::converge::run(&p.converge)),
        timed("scale", || crate::commands::scale::run(&p.scale)),
        timed("cache", || crate::commands::cache::run(&p.cache)),
        timed("substeps", || crate::commands::substeps::run(&p.substeps)),
        timed("claims", || crate::commands::claims::run(&p.claims)),
        timed("tethers", || crate::commands::tethers::run(&p.tethers)),
        timed("bodies", || {
            crate::commands::bodies::section(&p.bodies, &a.common.out)
        }),
        timed("gpu", || crate::commands::gpu::run(&p.gpu)),
    ];
    for r in &p.render {
        let name = format!("render {}", r.scene);
        parts.push(timed(&name, || {
            match crate::setup::or_note(crate::commands::render::run(r))? {
                Ok(s) => Ok(s),
                Err(note) => {
                    let mut s = Section::new(&format!("Pictures: {}", r.scene));
                    s.line(format!("Not rendered: {note}."));
                    Ok(s)
                }
            }
        }));
    }
    let total = t0.elapsed().as_secs_f64();
    let path = a.common.out.join("REPORT.md");
    let md = markdown(a, &machine, &parts, total, &a.common.out);
    std::fs::write(&path, md).map_err(|e| crate::setup::io_error(&path, e))?;
    let mut sec = Section::new("Report");
    for (_, _, r) in &parts {
        if let Ok(s) = r {
            sec.add_files(s.files.iter().cloned());
        }
    }
    sec.add_files([path.clone()]);
    let failed: Vec<String> = parts
        .iter()
        .filter_map(|(n, _, r)| r.as_ref().err().map(|e| format!("{n}: {e}")))
        .collect();
    eprintln!(
        "wobble: report written to {} in {total:.1} s",
        path.display()
    );
    if !failed.is_empty() {
        return Err(Error::Io(format!(
            "{} (see {})",
            failed.join("; "),
            path.display()
        )));
    }
    Ok(sec)
}

fn markdown(
    a: &ReportArgs,
    machine: &machine::Machine,
    parts: &[(String, f64, Result<Section, Error>)],
    total: f64,
    out: &Path,
) -> String {
    let mut s = String::new();
    s.push_str("# wobble report\n\n");
    s.push_str(&format!(
        "Written by `wobble report{}` (wobble {}) in {total:.0} s. Every figure and plot here comes from this run; \
         the verdicts on published claims are in [CLAIMS.md](CLAIMS.md).\n\n",
        if a.quick { " --quick" } else { "" },
        env!("CARGO_PKG_VERSION")
    ));
    s.push_str("## Summary of findings\n\n");
    s.push_str(&claims_summary(&out.join("claims.csv")));
    s.push_str("\n\nDetails, quotes and rules in [CLAIMS.md](CLAIMS.md).\n\n");
    s.push_str("## Machine\n\n");
    s.push_str(&machine.markdown());
    s.push_str(&machine::Machine::kernel_line(
        a.common.tuning.kernel.kernel(),
    ));
    s.push_str("\n## Parts\n\n| part | seconds | outcome |\n| --- | --- | --- |\n");
    for (name, secs, r) in parts {
        let outcome = match r {
            Ok(sec) => format!("{} files", sec.files.len()),
            Err(e) => format!("failed: {}", e.to_string().replace('|', "/")),
        };
        s.push_str(&format!("| {name} | {secs:.1} | {outcome} |\n"));
    }
    for (name, _, r) in parts {
        match r {
            Ok(sec) => {
                s.push_str(&format!("\n## {}\n\n", sec.title));
                s.push_str(&sec.body);
            }
            Err(e) => s.push_str(&format!("\n## {name}\n\nFailed: {e}\n")),
        }
    }
    s.push_str("\n## Files\n\n");
    for (_, _, r) in parts {
        if let Ok(sec) = r {
            for f in &sec.files {
                let r = rel(f, out);
                s.push_str(&format!("- [{r}]({r})\n"));
            }
        }
    }
    s
}

/// One line per claim from `claims.csv` (verdict and deciding figure), or why there are none.
pub fn claims_summary(csv_path: &Path) -> String {
    let mut r = match ::csv::Reader::from_path(csv_path) {
        Ok(r) => r,
        Err(e) => {
            return format!(
                "No claim verdicts: {} could not be read ({e}).",
                csv_path.display()
            )
        }
    };
    let mut lines = Vec::new();
    for row in r.records().flatten() {
        let get = |i: usize| row.get(i).unwrap_or("").to_string();
        let (id, verdict, figure, threshold) = (get(0), get(2), get(3), get(4));
        lines.push(if figure == "-" || figure.is_empty() {
            format!("- **{id}** {verdict}")
        } else {
            format!("- **{id}** {verdict}: {figure} (threshold {threshold})")
        });
    }
    if lines.is_empty() {
        format!("No claim verdicts in {}.", csv_path.display())
    } else {
        lines.join("\n")
    }
}
