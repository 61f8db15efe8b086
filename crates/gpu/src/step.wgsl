// The step loop's per-particle passes: prediction, attachments, contacts (find, project,
// friction, restitution) and the velocity update. Each thread owns one particle (or one
// attachment), so no two threads write the same memory.

struct Collider {
    // Plane: (normal, offset); sphere: (centre, radius).
    shape: vec4<f32>,
    // (kind: 0 plane, 1 sphere; friction; restitution; unused).
    material: vec4<f32>,
}

struct Attach {
    target_x: f32, target_y: f32, target_z: f32, particle: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> x_prev: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> colliders: array<Collider>;
// One (approach speed, depth pushed, active, unused) per particle and collider.
@group(0) @binding(5) var<storage, read_write> contacts: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> attach: array<Attach>;

// Signed distance and outward normal of collider `c` at `p` (solver-core's `signed_distance`).
fn sdf(c: u32, p: vec3<f32>) -> vec4<f32> {
    let col = colliders[c];
    if (col.material.x == 0.0) {
        return vec4<f32>(col.shape.xyz, dot(col.shape.xyz, p) - col.shape.w);
    }
    let d = p - col.shape.xyz;
    let len = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
    var n = vec3<f32>(0.0, 1.0, 0.0);
    if (len > 0.0) {
        n = d / len;
    }
    return vec4<f32>(n, len - col.shape.w);
}

@compute @workgroup_size(WG)
fn predict(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg);
    if (i >= P.n) {
        return;
    }
    let xi = x[i];
    let vi = v[i];
    x_prev[i] = xi;
    if (xi.w != 0.0) {
        // External forces are refused at upload, so f = 0: v <- v d + h g.
        let g = vec3<f32>(P.gx, P.gy, P.gz);
        let vn = vi.xyz * P.damp + P.h * g;
        v[i] = vec4<f32>(vn, vi.w);
        x[i] = vec4<f32>(xi.xyz + P.h * vn, xi.w);
    }
}

@compute @workgroup_size(WG)
fn attachments(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let a = flat_index(gid, nwg);
    if (a >= P.attachments) {
        return;
    }
    let t = attach[a];
    let w = x[t.particle].w;
    x[t.particle] = vec4<f32>(t.target_x, t.target_y, t.target_z, w);
}

@compute @workgroup_size(WG)
fn find_contacts(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg);
    if (i >= P.n) {
        return;
    }
    let p = x[i];
    for (var c = 0u; c < P.colliders; c++) {
        var contact = vec4<f32>(0.0);
        if (p.w != 0.0) {
            let s = sdf(c, p.xyz);
            if (s.w < P.margin) {
                contact = vec4<f32>(dot(v[i].xyz, s.xyz), 0.0, 1.0, 0.0);
            }
        }
        contacts[i * P.colliders + c] = contact;
    }
}

@compute @workgroup_size(WG)
fn project_contacts(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg);
    if (i >= P.n) {
        return;
    }
    var p = x[i];
    for (var c = 0u; c < P.colliders; c++) {
        let e = i * P.colliders + c;
        var contact = contacts[e];
        if (contact.z == 0.0) {
            continue;
        }
        let s = sdf(c, p.xyz);
        if (s.w < 0.0) {
            p = vec4<f32>(p.xyz - s.xyz * s.w, p.w);
            contact.y -= s.w;
            contacts[e] = contact;
        }
    }
    x[i] = p;
}

@compute @workgroup_size(WG)
fn friction(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg);
    if (i >= P.n) {
        return;
    }
    var p = x[i];
    for (var c = 0u; c < P.colliders; c++) {
        let contact = contacts[i * P.colliders + c];
        let mu = colliders[c].material.y;
        if (contact.z == 0.0 || mu <= 0.0 || contact.y <= 0.0) {
            continue;
        }
        let s = sdf(c, p.xyz);
        if (s.w > 1e-6) {
            continue;
        }
        let dx = p.xyz - x_prev[i].xyz;
        let tangential = dx - s.xyz * dot(dx, s.xyz);
        let t_len = length(tangential);
        if (t_len <= 0.0) {
            continue;
        }
        let limit = mu * contact.y;
        var scale = 1.0;
        if (t_len >= limit) {
            scale = min(limit / t_len, 1.0);
        }
        p = vec4<f32>(p.xyz - tangential * scale, p.w);
    }
    x[i] = p;
}

@compute @workgroup_size(WG)
fn velocities(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg);
    if (i >= P.n) {
        return;
    }
    let vi = v[i];
    v[i] = vec4<f32>((x[i].xyz - x_prev[i].xyz) * P.inv_h, vi.w);
}

@compute @workgroup_size(WG)
fn restitution(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg);
    if (i >= P.n) {
        return;
    }
    let p = x[i].xyz;
    for (var c = 0u; c < P.colliders; c++) {
        let contact = contacts[i * P.colliders + c];
        if (contact.z == 0.0 || contact.y <= 0.0 || contact.x >= -P.bounce) {
            continue;
        }
        let n = sdf(c, p).xyz;
        let vel = v[i];
        let vn = dot(vel.xyz, n);
        let target_speed = -colliders[c].material.z * contact.x;
        v[i] = vec4<f32>(vel.xyz + n * (target_speed - vn), vel.w);
    }
}
