// The Jacobi family's two phases (sparse's `JacobiCore`): every constraint writes its
// multiplier update and one correction per particle slot into its own entries (2g, 2g + 1);
// then every particle sums its entries through the particle -> entries CSR, in ascending
// constraint order. No float atomics: each sum has one order, so every run gives the same bits.

// `Averaging` as the host numbers it.
const AVERAGE_OFF: u32 = 0u;
const AVERAGE_CONSTRAINT: u32 = 1u;
const AVERAGE_PARTICLE: u32 = 2u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> cons: array<Constraint>;
@group(0) @binding(3) var<storage, read_write> lambda: array<f32>;
// One [dx, dy, dz, active] per incidence entry.
@group(0) @binding(4) var<storage, read_write> corr: array<vec4<f32>>;
// Constraints on each particle (n_p), for `Averaging::Constraint`.
@group(0) @binding(5) var<storage, read> counts: array<f32>;
// The particle -> entries CSR: row offsets (n + 1) and entry indices.
@group(0) @binding(6) var<storage, read> rows: array<u32>;
@group(0) @binding(7) var<storage, read> entries: array<u32>;
// Chebyshev: each particle's Jacobi step and (|step|², |x|²) for the norms.
@group(0) @binding(8) var<storage, read_write> steps: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read_write> squares: array<vec2<f32>>;
// Chebyshev: the multipliers before this iteration's update.
@group(0) @binding(10) var<storage, read_write> lambda_k: array<f32>;

// sparse's `distance_correction`, operation for operation.
@compute @workgroup_size(WG)
fn corrections(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = flat_index(gid, nwg);
    if (g >= P.m) {
        return;
    }
    let c = cons[g];
    let pi = x[c.i];
    let pj = x[c.j];
    let d = pi.xyz - pj.xyz;
    let len = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
    var n = vec3<f32>(0.0);
    if (len > 0.0) {
        n = d / len;
    }
    let value = len - c.rest;
    var ni = 1.0;
    var nj = 1.0;
    if (P.average == AVERAGE_CONSTRAINT) {
        ni = counts[c.i];
        nj = counts[c.j];
    }
    let n2 = n.x * n.x + n.y * n.y + n.z * n.z;
    let alpha = compliance_of(c) * P.inv_dt2;
    let denom = alpha + ni * pi.w * n2 + nj * pj.w * n2;
    let lam = lambda[g];
    if (P.keep_lambda != 0u) {
        lambda_k[g] = lam;
    }
    // An inactive tether (C <= 0) corrects nothing, as sparse's `constraint_correction`.
    if (!(denom > P.min_denom && denom <= F32_MAX) || (is_unilateral(c) && !(value > 0.0))) {
        corr[2u * g] = vec4<f32>(0.0);
        corr[2u * g + 1u] = vec4<f32>(0.0);
        return;
    }
    var relax = P.omega;
    if (P.average == AVERAGE_PARTICLE) {
        relax = 1.0;
    }
    let dl = relax * ((-value - alpha * lam) / denom);
    lambda[g] = lam + dl;
    let si = P.k * pi.w * dl;
    let sj = P.k * pj.w * dl;
    corr[2u * g] = vec4<f32>(si * n.x, si * n.y, si * n.z, 1.0);
    corr[2u * g + 1u] = vec4<f32>(-sj * n.x, -sj * n.y, -sj * n.z, 1.0);
}

// sparse's `JacobiCore::step_of`: the particle's summed corrections, relaxed and averaged.
fn step_of(p: u32) -> vec3<f32> {
    var acc = vec4<f32>(0.0);
    for (var e = rows[p]; e < rows[p + 1u]; e++) {
        let d = corr[entries[e]];
        acc = vec4<f32>(acc.x + d.x, acc.y + d.y, acc.z + d.z, acc.w + d.w);
    }
    var scale = 1.0;
    if (P.average == AVERAGE_PARTICLE) {
        scale = P.omega;
        if (acc.w > 1.0) {
            scale = P.omega / acc.w;
        }
    }
    return vec3<f32>(scale * acc.x, scale * acc.y, scale * acc.z);
}

// Jacobi: every particle takes its step.
@compute @workgroup_size(WG)
fn apply_steps(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = flat_index(gid, nwg);
    if (p >= P.n) {
        return;
    }
    let d = step_of(p);
    let xp = x[p];
    x[p] = vec4<f32>(xp.x + d.x, xp.y + d.y, xp.z + d.z, xp.w);
}

// Chebyshev: every particle's step is kept (the extrapolation needs the step norm first).
@compute @workgroup_size(WG)
fn store_steps(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = flat_index(gid, nwg);
    if (p >= P.n) {
        return;
    }
    let d = step_of(p);
    let xp = x[p].xyz;
    steps[p] = vec4<f32>(d, 0.0);
    squares[p] = vec2<f32>(dot(d, d), dot(xp, xp));
}
