// Shared by every kernel of the crate: the step's parameters (one uniform per step, written
// before the step's only submission) and the flat index of a thread in a 2-D dispatch (a
// dispatch wider than 65535 workgroups wraps into y).

struct Params {
    gx: f32, gy: f32, gz: f32, h: f32,
    inv_h: f32, inv_dt2: f32, k: f32, damp: f32,
    omega: f32, margin: f32, bounce: f32, min_denom: f32,
    n: u32, m: u32, iterations: u32, average: u32,
    colliders: u32, attachments: u32, keep_lambda: u32, signal: f32,
}

// Threads per workgroup of every per-item kernel (the host's `WORKGROUP`).
const WG: u32 = 64u;

fn flat_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

// The largest finite f32: a denominator above it (or NaN, which fails every comparison) is
// degenerate, as `xpbd_delta_lambda` says on the CPU.
const F32_MAX: f32 = 3.40282347e38;

// A pair constraint as the host uploads it (`constraint_rows`): a distance constraint, or a
// tether (unilateral: acts only while C > 0), flagged by the sign bit of its compliance.
struct Constraint {
    i: u32, j: u32, rest: f32, compliance: f32,
}

fn is_unilateral(c: Constraint) -> bool {
    return (bitcast<u32>(c.compliance) & 0x80000000u) != 0u;
}

fn compliance_of(c: Constraint) -> f32 {
    return abs(c.compliance);
}
