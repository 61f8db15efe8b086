//! Tearing: distance constraints break when stretched too far, and the surface splits along
//! the broken edges.
//!
//! Theory (the particle-splitting scheme of Müller et al. 2007 §4.6 / Pfaff et al. 2014,
//! simplified to whole edges). A distance constraint with strain `(l - l0)/l0` above the
//! threshold breaks (at most `max_per_step` of the most strained per call, so a tear
//! propagates from its tip instead of shattering a uniformly stretched sheet). A triangle edge
//! is intact while a distance constraint joins its two ends. Around each particle at a broken
//! edge, the incident triangles fall into fans — groups connected through intact edges at that
//! particle. Every fan after the first gets its own copy of the particle (same position and
//! velocity, the mass shared equally among the copies, pins kept), and takes with it its
//! triangles and the distance constraints along its edges, so the render mesh opens. Other
//! constraint kinds keep referring to the original particle. The body's topology id is renewed,
//! so solvers rebuild their colorings.

use crate::body::Body;
use crate::error::{Result, WobbleError};
use std::collections::{HashMap, HashSet};

/// When and how much a body tears.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tearing {
    /// Strain `(l - l0)/l0` above which a distance constraint breaks (> 0).
    pub threshold: f32,
    /// Most constraints broken per call (the most strained first; >= 1).
    pub max_per_step: usize,
}

/// What one call to [`tear`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TearReport {
    /// Distance constraints removed.
    pub broken: usize,
    /// Particles added (copies made to open the surface).
    pub duplicated: usize,
}

fn find(parent: &mut [u32], mut a: u32) -> u32 {
    while parent[a as usize] != a {
        parent[a as usize] = parent[parent[a as usize] as usize];
        a = parent[a as usize];
    }
    a
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb) as usize] = ra.min(rb);
    }
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Breaks over-stretched distance constraints of a triangle-mesh body and splits its surface
/// along them (see the module doc). Tetrahedral bodies are not supported.
pub fn tear(body: &mut Body, tearing: &Tearing) -> Result<TearReport> {
    if !(tearing.threshold.is_finite() && tearing.threshold > 0.0) {
        return Err(WobbleError::BadParameter {
            name: "tear threshold",
            value: tearing.threshold as f64,
            reason: "must be a finite strain > 0",
        });
    }
    if tearing.max_per_step == 0 {
        return Err(WobbleError::BadCount {
            name: "tears per step",
            value: 0,
            max: u32::MAX as u64,
        });
    }
    if !body.topology.tets.is_empty() {
        return Err(WobbleError::Unsupported(
            "tearing splits triangle surfaces; tetrahedral bodies cannot tear".into(),
        ));
    }
    let x = &body.particles.x;
    let d = &body.constraints.distance;
    let mut over: Vec<(f32, usize)> = (0..d.len())
        .filter_map(|c| {
            let [i, j] = d.pairs[c];
            let l = (x[i as usize].xyz() - x[j as usize].xyz()).length();
            let strain = (l - d.rest[c]) / d.rest[c];
            (strain > tearing.threshold).then_some((strain, c))
        })
        .collect();
    if over.is_empty() {
        return Ok(TearReport::default());
    }
    over.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    over.truncate(tearing.max_per_step);
    let mut broken: Vec<usize> = over.iter().map(|&(_, c)| c).collect();
    broken.sort_unstable();
    let mut torn_ends: Vec<u32> = broken
        .iter()
        .flat_map(|&c| body.constraints.distance.pairs[c])
        .collect();
    torn_ends.sort_unstable();
    torn_ends.dedup();

    // Remove the broken constraints, keeping the structural prefix count right.
    let d = &mut body.constraints.distance;
    let in_prefix = broken
        .iter()
        .filter(|&&c| c < body.topology.structural)
        .count();
    let mut keep = vec![true; d.len()];
    for &c in &broken {
        keep[c] = false;
    }
    let mut k = 0;
    d.pairs.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    k = 0;
    d.rest.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    k = 0;
    d.compliance.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    body.topology.structural -= in_prefix;

    let intact: HashSet<(u32, u32)> = d.pairs.iter().map(|&[i, j]| key(i, j)).collect();
    let mut incident: HashMap<u32, Vec<u32>> = torn_ends.iter().map(|&p| (p, Vec::new())).collect();
    for (t, tri) in body.topology.triangles.iter().enumerate() {
        for &p in tri {
            if let Some(list) = incident.get_mut(&p) {
                list.push(t as u32);
            }
        }
    }
    let mut duplicated = 0;
    for &p in &torn_ends {
        let tris = &incident[&p];
        if tris.len() < 2 {
            continue;
        }
        // Group p's triangles into fans joined through intact edges at p.
        let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
        let mut by_edge: HashMap<u32, u32> = HashMap::new();
        for (a, &t) in tris.iter().enumerate() {
            for &q in &body.topology.triangles[t as usize] {
                if q == p || !intact.contains(&key(p, q)) {
                    continue;
                }
                match by_edge.get(&q) {
                    Some(&b) => union(&mut parent, a as u32, b),
                    None => {
                        by_edge.insert(q, a as u32);
                    }
                }
            }
        }
        let roots: Vec<u32> = (0..tris.len() as u32)
            .map(|a| find(&mut parent, a))
            .collect();
        let mut fans: Vec<u32> = roots.clone();
        fans.sort_unstable();
        fans.dedup();
        if fans.len() < 2 {
            continue;
        }
        let copies = fans.len();
        let mass = body.particles.mass[p as usize];
        let pinned = body.particles.x[p as usize].w == 0.0;
        if !pinned {
            body.particles.set_mass(p as usize, mass / copies as f32)?;
        }
        for &fan in &fans[1..] {
            let q = body.particles.len() as u32;
            let pa = &mut body.particles;
            pa.x.push(pa.x[p as usize]);
            pa.x_prev.push(pa.x_prev[p as usize]);
            pa.v.push(pa.v[p as usize]);
            pa.force.push(pa.force[p as usize]);
            pa.mass.push(pa.mass[p as usize]);
            duplicated += 1;
            let mut neighbours = HashSet::new();
            for (a, &t) in tris.iter().enumerate() {
                if roots[a] != fan {
                    continue;
                }
                for v in body.topology.triangles[t as usize].iter_mut() {
                    if *v == p {
                        *v = q;
                    } else {
                        neighbours.insert(*v);
                    }
                }
            }
            for pair in body.constraints.distance.pairs.iter_mut() {
                for s in 0..2 {
                    if pair[s] == p && neighbours.contains(&pair[1 - s]) {
                        // An edge that also lies on a triangle of the first fan stays there.
                        pair[s] = q;
                    }
                }
            }
        }
    }
    body.topology_changed();
    Ok(TearReport {
        broken: broken.len(),
        duplicated,
    })
}

/// Number of connected pieces: particles joined by triangles or distance constraints (an
/// isolated particle is a piece of its own).
pub fn connected_components(body: &Body) -> usize {
    let n = body.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    for &[i, j] in &body.constraints.distance.pairs {
        union(&mut parent, i, j);
    }
    for t in &body.topology.triangles {
        union(&mut parent, t[0], t[1]);
        union(&mut parent, t[1], t[2]);
    }
    (0..n as u32).filter(|&p| find(&mut parent, p) == p).count()
}
