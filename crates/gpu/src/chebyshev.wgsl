// Chebyshev acceleration of the Jacobi steps (sparse's `Chebyshev`), with the spectral radius
// probe and the adaptive restart decided on the device: the norms are summed by a fixed tree
// (blocks of REDUCE_BLOCK particles, then the blocks in order by one thread), and one thread
// keeps the sequence's state, so a step never waits for the host.

// Particles summed by one workgroup of `reduce_blocks` (WG threads, each a fixed stride).
const REDUCE_BLOCK: u32 = 4096u;

struct Control {
    rho: f32, has_rho: u32, probing: u32, k: u32,
    norm_a: f32, norm_b: f32, omega: f32, start: u32,
    last_norm: f32, restarts: u32, delay: u32, max_rho: f32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> prev: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> lambda: array<f32>;
@group(0) @binding(4) var<storage, read_write> prev_lambda: array<f32>;
@group(0) @binding(5) var<storage, read_write> lambda_k: array<f32>;
@group(0) @binding(6) var<storage, read_write> steps: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> squares: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read_write> partials: array<vec2<f32>>;
@group(0) @binding(9) var<storage, read_write> control: Control;

var<workgroup> tree: array<vec2<f32>, WG>;

// A substep's start (sparse's `Chebyshev::begin`; the host clears the multipliers and copies
// the positions to `prev`).
@compute @workgroup_size(1)
fn begin() {
    control.omega = 1.0;
    control.norm_a = 0.0;
    control.norm_b = 0.0;
    control.probing = select(0u, 1u, control.has_rho == 0u);
    control.start = 0u;
    control.last_norm = bitcast<f32>(0x7f800000u);
    control.k = 0u;
}

@compute @workgroup_size(WG)
fn reduce_blocks(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = wid.x * REDUCE_BLOCK;
    var sum = vec2<f32>(0.0);
    for (var e = base + lid.x; e < min(base + REDUCE_BLOCK, P.n); e += WG) {
        sum += squares[e];
    }
    tree[lid.x] = sum;
    workgroupBarrier();
    for (var width = WG / 2u; width > 0u; width /= 2u) {
        if (lid.x < width) {
            tree[lid.x] += tree[lid.x + width];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        partials[wid.x] = tree[0];
    }
}

// The probe, the restart test and the next ω (sparse's `Chebyshev::iterate`, before the update).
@compute @workgroup_size(1)
fn decide() {
    var total = vec2<f32>(0.0);
    let blocks = (P.n + REDUCE_BLOCK - 1u) / REDUCE_BLOCK;
    for (var b = 0u; b < blocks; b++) {
        total += partials[b];
    }
    let norm = sqrt(total.x);
    let k = control.k;
    if (control.probing != 0u) {
        control.norm_a = control.norm_b;
        control.norm_b = norm;
        if (k + 1u == P.iterations && k >= 1u) {
            let noise = P.signal * sqrt(total.y);
            if (min(control.norm_a, control.norm_b) > noise) {
                control.rho = clamp(control.norm_b / control.norm_a, 0.0, control.max_rho);
                control.has_rho = 1u;
            }
        }
    } else {
        if (norm > control.last_norm) {
            control.start = k;
            control.restarts += 1u;
        }
        control.last_norm = norm;
        let j = k - control.start;
        let rho = control.rho;
        if (j == control.delay) {
            control.omega = 2.0 / (2.0 - rho * rho);
        } else if (j > control.delay) {
            control.omega = 4.0 / (4.0 - rho * rho * control.omega);
        } else {
            control.omega = 1.0;
        }
    }
    control.k = k + 1u;
}

@compute @workgroup_size(WG)
fn extrapolate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = flat_index(gid, nwg);
    if (p >= P.n) {
        return;
    }
    let omega = control.omega;
    let d = steps[p].xyz;
    let xk = x[p];
    let hat = vec3<f32>(xk.x + d.x, xk.y + d.y, xk.z + d.z);
    let pp = prev[p].xyz;
    if (omega != 1.0 && xk.w != 0.0) {
        x[p] = vec4<f32>(omega * (hat - pp) + pp, xk.w);
    } else {
        x[p] = vec4<f32>(hat, xk.w);
    }
    prev[p] = xk;
}

@compute @workgroup_size(WG)
fn extrapolate_multipliers(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = flat_index(gid, nwg);
    if (g >= P.m || control.probing != 0u) {
        return;
    }
    let omega = control.omega;
    if (omega != 1.0) {
        let p = prev_lambda[g];
        lambda[g] = omega * (lambda[g] - p) + p;
    }
    prev_lambda[g] = lambda_k[g];
}
