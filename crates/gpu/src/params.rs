//! The step's parameters as the kernels read them (`Params` in `common.wgsl`).

use solver_core::{StepParams, Stiffness};

/// `Params` of `common.wgsl`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Params {
    pub gx: f32,
    pub gy: f32,
    pub gz: f32,
    pub h: f32,
    pub inv_h: f32,
    pub inv_dt2: f32,
    pub k: f32,
    pub damp: f32,
    pub omega: f32,
    pub margin: f32,
    pub bounce: f32,
    pub min_denom: f32,
    pub n: u32,
    pub m: u32,
    pub iterations: u32,
    pub average: u32,
    pub colliders: u32,
    pub attachments: u32,
    pub keep_lambda: u32,
    pub signal: f32,
}

impl Params {
    /// The substep's figures of `p` (already planned: `p.substeps` is what runs), as the CPU
    /// step loop computes them; the body's and solver's fields are left as they are.
    pub fn set_step(&mut self, p: &StepParams) {
        let h = p.substep_dt();
        let inv_h = 1.0 / h;
        self.gx = p.gravity.x;
        self.gy = p.gravity.y;
        self.gz = p.gravity.z;
        self.h = h;
        self.inv_h = inv_h;
        self.inv_dt2 = match p.stiffness {
            Stiffness::Xpbd => inv_h * inv_h,
            Stiffness::Pbd { .. } => 0.0,
        };
        self.k = p.correction_scale();
        self.damp = (1.0 - p.damping * h).max(0.0);
        self.margin = p.contact_margin;
        self.bounce = 2.0 * p.gravity.length() * h;
        self.iterations = p.iterations as u32;
    }
}
