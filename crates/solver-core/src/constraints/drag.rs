//! The drag constraint of a grab: a surface point `p = Σ b_k x_k` of a triangle pulled toward a
//! target, `C = |Σ b_k x_k - target|`, `∇_k C = b_k n` with `n = (p - target)/|p - target|`,
//! with a compliance, like a mouse spring. Grabs are made and moved by
//! [`crate::interaction::picking`].

use super::{ConstraintKind, MAX_ARITY};
use crate::geometry::packed::Packed4;
use glam::Vec3;

/// Identifies one grab made with [`crate::interaction::picking::grab`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GrabId(pub(crate) u64);

/// Drag constraints: grabbed surface points pulled toward their targets.
#[derive(Clone, Debug, Default)]
pub struct Drag {
    /// Grab ids, one per constraint.
    pub ids: Vec<GrabId>,
    /// Corner particles of each grabbed point's triangle.
    pub corners: Vec<[u32; 3]>,
    /// Barycentric weights of each grabbed point.
    pub weights: Vec<[f32; 3]>,
    /// Where each point is pulled.
    pub targets: Vec<Vec3>,
    /// Compliance of each drag (m/N; 0 = rigid).
    pub compliance: Vec<f32>,
}

impl ConstraintKind for Drag {
    fn name(&self) -> &'static str {
        "drag"
    }
    fn len(&self) -> usize {
        self.ids.len()
    }
    fn particles(&self, c: usize) -> &[u32] {
        &self.corners[c]
    }
    fn compliance(&self, c: usize) -> f32 {
        self.compliance[c]
    }
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        let b = self.weights[c];
        let k = self.corners[c];
        let p = x[k[0] as usize].xyz() * b[0]
            + x[k[1] as usize].xyz() * b[1]
            + x[k[2] as usize].xyz() * b[2];
        let d = p - self.targets[c];
        let len = d.length();
        let n = if len > 0.0 { d / len } else { Vec3::ZERO };
        for s in 0..3 {
            grad[s] = n * b[s];
        }
        len
    }
    fn scale(&self) -> f32 {
        1.0
    }
    fn projected_by_step_loop(&self) -> bool {
        true
    }
    fn move_frame(&mut self, shift: glam::DVec3) {
        for t in self.targets.iter_mut() {
            *t = (t.as_dvec3() - shift).as_vec3();
        }
    }
    fn particle_indices_mut(&mut self) -> &mut [u32] {
        self.corners.as_flattened_mut()
    }
}
