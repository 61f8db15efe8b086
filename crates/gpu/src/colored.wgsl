// Colored Gauss-Seidel: one dispatch per color. The constraints are stored color after
// color, with their multipliers in the same order; a color's constraints share no particle,
// so each thread projects one constraint and no two threads touch the same particle.

// First constraint and count of the color this dispatch projects.
struct Color {
    start: u32, count: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> cons: array<Constraint>;
@group(0) @binding(3) var<storage, read_write> lambda: array<f32>;
@group(0) @binding(4) var<uniform> color: Color;

// solver-core's `project_distance_pair`, operation for operation; a tether also skips while
// C <= 0, as solver-core's tether kernel does, and leaves a pinned anchor unwritten (a tether
// batch shares anchors between threads; the host refuses a batch with a free one).
@compute @workgroup_size(WG)
fn project_color(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = flat_index(gid, nwg);
    if (t >= color.count) {
        return;
    }
    let g = color.start + t;
    let c = cons[g];
    var pi = x[c.i];
    var pj = x[c.j];
    let dx = pi.x - pj.x;
    let dy = pi.y - pj.y;
    let dz = pi.z - pj.z;
    let len = sqrt(dx * dx + dy * dy + dz * dz);
    let unilateral = is_unilateral(c);
    if (len <= 0.0 || (unilateral && !(len - c.rest > 0.0))) {
        return;
    }
    let alpha = compliance_of(c) * P.inv_dt2;
    let denom = pi.w + pj.w + alpha;
    if (!(denom > P.min_denom && denom <= F32_MAX)) {
        return;
    }
    let lam = lambda[g];
    let dl = (-(len - c.rest) - alpha * lam) / denom;
    lambda[g] = lam + dl;
    let s = P.k * dl / len;
    let si = s * pi.w;
    let sj = s * pj.w;
    pi = vec4<f32>(pi.x + si * dx, pi.y + si * dy, pi.z + si * dz, pi.w);
    pj = vec4<f32>(pj.x - sj * dx, pj.y - sj * dy, pj.z - sj * dz, pj.w);
    x[c.i] = pi;
    if (!(unilateral && pj.w == 0.0)) {
        x[c.j] = pj;
    }
}
