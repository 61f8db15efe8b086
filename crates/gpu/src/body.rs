//! A body resident on the device: its particles, colliders and attachments in storage
//! buffers, a solver's state beside them, and the step loop recorded into one submission.

use crate::chebyshev::Chebyshev;
use crate::colored::Colored;
use crate::device::Gpu;
use crate::error::{GpuError, Result};
use crate::jacobi::{averaging_code, Jacobi};
use crate::kernels::{storage, uniform, zeroed, Kernels, Slot};
use crate::params::Params;
use crate::solver::{constraint_rows, unsupported_kind, GpuSolver, Setup, Shared, Solve};
use solver_core::collide::Shape;
use solver_core::constraints::MIN_DENOMINATOR;
use solver_core::figures::residual;
use solver_core::glam::Vec3;
use solver_core::{Body, Constraints, Packed4, StepParams, WobbleError};
use sparse::chebyshev::PROBE_SIGNAL;
use sparse::{JacobiOptions, SolverKind};

/// What one [`GpuBody::step`] recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuStepReport {
    /// Substeps run (more than asked when the frame was split, as on the CPU).
    pub substeps: usize,
    /// Dispatches recorded.
    pub dispatches: usize,
    /// Command submissions (1; with residuals, one more per iteration).
    pub submissions: usize,
}

/// A body on the GPU, stepped by one of the [`GpuSolver`]s.
#[derive(Debug)]
pub struct GpuBody {
    gpu: Gpu,
    solver: GpuSolver,
    solve: Box<dyn Solve>,
    params: Params,
    shared: Shared,
    v: wgpu::Buffer,
    step_kernels: Kernels,
    step_bind: wgpu::BindGroup,
    particles: usize,
    colliders: usize,
    attachments: usize,
}

/// What [`GpuBody::new`] refuses, in words: the parts of a body the kernels do not run.
fn unsupported(body: &Body) -> Option<String> {
    if let Some(kind) = unsupported_kind(body.constraints()) {
        return Some(format!(
            "constraint kind '{kind}' (the GPU kernels project distance constraints and tethers only)"
        ));
    }
    if body.wind().is_some() {
        return Some("wind".into());
    }
    if let Some(i) = body
        .particles()
        .force()
        .iter()
        .position(|f| f.xyz() != solver_core::glam::Vec3::ZERO)
    {
        return Some(format!(
            "external force on particle {i} (the GPU prediction integrates gravity only)"
        ));
    }
    if body.origin() != solver_core::glam::DVec3::ZERO {
        return Some(format!(
            "a body whose origin is {} (the GPU kernels neither move colliders and targets into a body frame nor recentre: use the CPU step, or bring the body to the world's origin)",
            body.origin()
        ));
    }
    for (k, c) in body.colliders().iter().enumerate() {
        if c.motion.is_some() {
            return Some(format!(
                "moving collider {k} (the GPU kernels collide with colliders that stay put)"
            ));
        }
        if !matches!(c.shape, Shape::Plane { .. } | Shape::Sphere { .. }) {
            return Some(format!(
                "collider {k} (the GPU kernels collide with planes and spheres only)"
            ));
        }
    }
    None
}

fn packed(p: &Packed4) -> [f32; 4] {
    [p.x, p.y, p.z, p.w]
}

impl GpuBody {
    /// Uploads `body` to `gpu` and prepares the solver of `kind` with the options the CPU
    /// solver reads too (coloring, ω, averaging, ρ, delay). Refuses the kinds the GPU does not
    /// run ([`GpuSolver::of`]) and what its kernels do not (other constraint kinds, wind,
    /// external forces, colliders other than planes and spheres) with
    /// [`GpuError::Unsupported`].
    pub fn new(gpu: &Gpu, body: &Body, kind: SolverKind) -> Result<Self> {
        body.validate()?;
        let solver = GpuSolver::of(&kind)?;
        kind.validate()?;
        if let Some(what) = unsupported(body) {
            return Err(GpuError::Unsupported(what));
        }
        for (k, c) in body.colliders().iter().enumerate() {
            c.validate(k)?;
        }
        let n = body.len();
        // Other kinds were refused above: distance constraints and tethers are every constraint.
        let rows = constraint_rows(body.constraints());
        let m = rows.len();
        let too_many = |what: &'static str, len: usize| WobbleError::BadCount {
            name: what,
            value: len as u64,
            max: u32::MAX as u64,
        };
        if n >= u32::MAX as usize {
            return Err(too_many("particles", n).into());
        }
        if 2 * m >= u32::MAX as usize {
            return Err(too_many("constraints", m).into());
        }
        let p = &body.particles();
        let x: Vec<[f32; 4]> = p.x().iter().map(packed).collect();
        let v: Vec<[f32; 4]> = p.v().iter().map(packed).collect();
        let colliders: Vec<[f32; 8]> = body
            .colliders()
            .iter()
            .map(|c| {
                let (shape, kind) = match c.shape {
                    Shape::Plane { normal, offset } => (normal.extend(offset), 0.0),
                    Shape::Sphere { center, radius } => (center.extend(radius), 1.0),
                    _ => unreachable!("refused by `unsupported`"),
                };
                let s = shape.to_array();
                [s[0], s[1], s[2], s[3], kind, c.friction, c.restitution, 0.0]
            })
            .collect();
        let attach: Vec<[u32; 4]> = body
            .attachments()
            .iter()
            .map(|a| {
                [
                    a.to.x.to_bits(),
                    a.to.y.to_bits(),
                    a.to.z.to_bits(),
                    a.particle,
                ]
            })
            .collect();
        let jacobi = match kind {
            SolverKind::Jacobi(j) => j,
            SolverKind::Chebyshev(c) => c.jacobi,
            _ => JacobiOptions::default(),
        };
        let mut params = Params {
            omega: jacobi.omega,
            min_denom: MIN_DENOMINATOR,
            n: n as u32,
            m: m as u32,
            average: averaging_code(jacobi.average),
            colliders: colliders.len() as u32,
            attachments: attach.len() as u32,
            keep_lambda: (solver == GpuSolver::Chebyshev) as u32,
            signal: (PROBE_SIGNAL * f32::EPSILON as f64) as f32,
            ..Default::default()
        };
        params.set_step(&StepParams::default());
        let shared = Shared {
            params: uniform(gpu, "step parameters", &params),
            x: storage(gpu, "positions", &x),
        };
        let x_prev = zeroed(gpu, "previous positions", 16 * n);
        let v = storage(gpu, "velocities", &v);
        let collider_buf = storage(gpu, "colliders", &colliders);
        let contacts = zeroed(gpu, "contacts", 16 * n * colliders.len());
        let attach_buf = storage(gpu, "attachments", &attach);
        let step_kernels = Kernels::new(
            gpu,
            "step",
            include_str!("step.wgsl"),
            &[
                Slot::Uniform,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
                Slot::Read,
                Slot::Storage,
                Slot::Read,
            ],
            &[
                "predict",
                "attachments",
                "find_contacts",
                "project_contacts",
                "friction",
                "velocities",
                "restitution",
            ],
        );
        let step_bind = step_kernels.bind(
            gpu,
            &[
                &shared.params,
                &shared.x,
                &x_prev,
                &v,
                &collider_buf,
                &contacts,
                &attach_buf,
            ],
        );
        let setup = Setup {
            gpu,
            shared: &shared,
            constraints: body.constraints(),
            rows: &rows,
            positions: &x,
            particles: n,
            kind,
        };
        let solve: Box<dyn Solve> = match solver {
            GpuSolver::Colored => Box::new(Colored::new(&setup)?),
            GpuSolver::Jacobi => Box::new(Jacobi::new(&setup, false)?),
            GpuSolver::Chebyshev => Box::new(Chebyshev::new(&setup)?),
        };
        gpu.finish()?;
        Ok(GpuBody {
            gpu: gpu.clone(),
            solver,
            solve,
            params,
            shared,
            v,
            step_kernels,
            step_bind,
            particles: n,
            colliders: colliders.len(),
            attachments: attach.len(),
        })
    }

    /// The solver this body runs.
    pub fn solver(&self) -> GpuSolver {
        self.solver
    }

    /// Colors the solver sweeps (`colored` only).
    pub fn colors(&self) -> Option<usize> {
        self.solve.colors()
    }

    /// Particle count.
    pub fn len(&self) -> usize {
        self.particles
    }

    /// True without particles.
    pub fn is_empty(&self) -> bool {
        self.particles == 0
    }

    /// Records one step of `params` (split into substeps as the CPU step loop splits it) and
    /// submits it; returns without waiting for the device ([`Gpu::finish`] waits) and reads
    /// nothing back.
    pub fn step(&mut self, params: &StepParams) -> Result<GpuStepReport> {
        self.record_step(params, None)
    }

    /// [`GpuBody::step`], submitting after every iteration and reading the positions back to
    /// push the residual (`solver_core::figures::residual` of `constraints`, the constraints
    /// of the body this one was made from) onto `residuals`, as the CPU step loop records it:
    /// after each iteration and its contact projection. For convergence figures only: the
    /// read-backs cost far more than the step.
    pub fn step_with_residuals(
        &mut self,
        params: &StepParams,
        constraints: &Constraints,
        residuals: &mut Vec<f32>,
    ) -> Result<GpuStepReport> {
        self.record_step(params, Some((constraints, residuals)))
    }

    /// Records a step, as one submission, or with `trace`, one submission per iteration
    /// followed by a read-back and the residual.
    fn record_step(
        &mut self,
        params: &StepParams,
        mut trace: Option<(&Constraints, &mut Vec<f32>)>,
    ) -> Result<GpuStepReport> {
        let planned = params.planned()?;
        self.params.set_step(&planned);
        let gpu = self.gpu.clone();
        gpu.queue
            .write_buffer(&self.shared.params, 0, bytemuck::bytes_of(&self.params));
        let new_encoder = || {
            gpu.device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("step"),
                })
        };
        let mut encoder = new_encoder();
        let mut submissions = 0;
        let (k, b) = (&self.step_kernels, &self.step_bind);
        let n = self.particles;
        let contacts = self.colliders > 0;
        let (attach, cheb) = (self.attachments > 0, self.solver == GpuSolver::Chebyshev);
        // As recorded below: prediction, attachments, contacts found; the solver's begin and
        // iterations with the contacts projected after each; friction, velocities, restitution.
        let per_substep = 1
            + attach as usize
            + contacts as usize
            + cheb as usize
            + planned.iterations * (self.solve.dispatches_per_iteration() + contacts as usize)
            + 1
            + 2 * contacts as usize;
        let iterate = |pass: &mut wgpu::ComputePass| {
            self.solve.iterate(pass);
            if contacts {
                k.dispatch(pass, b, "project_contacts", n);
            }
        };
        for _ in 0..planned.substeps {
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                k.dispatch(&mut pass, b, "predict", n);
                k.dispatch(&mut pass, b, "attachments", self.attachments);
                if contacts {
                    k.dispatch(&mut pass, b, "find_contacts", n);
                }
            }
            self.solve.begin(&mut encoder);
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                self.solve.begin_in_pass(&mut pass);
                if trace.is_none() {
                    for _ in 0..planned.iterations {
                        iterate(&mut pass);
                    }
                }
            }
            if let Some((constraints, residuals)) = trace.as_mut() {
                for _ in 0..planned.iterations {
                    iterate(&mut encoder.begin_compute_pass(&Default::default()));
                    gpu.queue
                        .submit([std::mem::replace(&mut encoder, new_encoder()).finish()]);
                    submissions += 1;
                    let x: Vec<Packed4> = self
                        .read(&self.shared.x)?
                        .iter()
                        .map(|p| Packed4::new(Vec3::new(p[0], p[1], p[2]), p[3]))
                        .collect();
                    residuals.push(residual(constraints, &x));
                }
            }
            let mut pass = encoder.begin_compute_pass(&Default::default());
            if contacts {
                k.dispatch(&mut pass, b, "friction", n);
            }
            k.dispatch(&mut pass, b, "velocities", n);
            if contacts {
                k.dispatch(&mut pass, b, "restitution", n);
            }
        }
        gpu.queue.submit([encoder.finish()]);
        gpu.check()?;
        Ok(GpuStepReport {
            substeps: planned.substeps,
            dispatches: per_substep * planned.substeps,
            submissions: submissions + 1,
        })
    }

    /// Writes the positions and velocities of `body` (the body this one was made from: same
    /// particle count and constraints) onto the device, so that a run can restart from a
    /// common state without preparing the solver again.
    pub fn write_state(&mut self, body: &Body) -> Result<()> {
        self.check_len(body)?;
        let p = &body.particles();
        let x: Vec<[f32; 4]> = p.x().iter().map(packed).collect();
        let v: Vec<[f32; 4]> = p.v().iter().map(packed).collect();
        self.gpu
            .queue
            .write_buffer(&self.shared.x, 0, bytemuck::cast_slice(&x));
        self.gpu
            .queue
            .write_buffer(&self.v, 0, bytemuck::cast_slice(&v));
        self.gpu.check()
    }

    /// Refuses a body of another particle count than this one's, and one whose origin is not
    /// the world's (the device holds world coordinates).
    fn check_len(&self, body: &Body) -> Result<()> {
        if body.origin() != solver_core::glam::DVec3::ZERO {
            return Err(GpuError::Unsupported(format!(
                "a body whose origin is {} (the device holds world coordinates)",
                body.origin()
            )));
        }
        if body.len() != self.particles {
            return Err(WobbleError::BadCount {
                name: "particles of the body read into or written from",
                value: body.len() as u64,
                max: self.particles as u64,
            }
            .into());
        }
        Ok(())
    }

    /// Waits for the device to finish every submitted step.
    pub fn finish(&self) -> Result<()> {
        self.gpu.finish()
    }

    /// Reads the positions back (waits for the device).
    pub fn read_positions(&self) -> Result<Vec<[f32; 4]>> {
        self.read(&self.shared.x)
    }

    /// Reads positions and velocities back into `body` (the body this one was made from: same
    /// particle count), so that the CPU figures (stretch, energy) can be taken of it. A
    /// non-finite value is [`WobbleError::Diverged`]: the device checks nothing inside a step.
    pub fn read_into(&self, body: &mut Body) -> Result<()> {
        self.check_len(body)?;
        let x = self.read(&self.shared.x)?;
        let v = self.read(&self.v)?;
        for (i, (x, v)) in x.iter().zip(&v).enumerate() {
            if !(x.iter().chain(v).all(|c| c.is_finite())) {
                return Err(WobbleError::Diverged {
                    particle: i,
                    stage: "a GPU step (the device checks nothing between stages)".into(),
                    speed: None,
                }
                .into());
            }
        }
        let p = body.particles_mut();
        for (q, x) in p.x_mut().iter_mut().zip(&x) {
            q.x = x[0];
            q.y = x[1];
            q.z = x[2];
        }
        for (q, v) in p.v_mut().iter_mut().zip(&v) {
            q.x = v[0];
            q.y = v[1];
            q.z = v[2];
        }
        Ok(())
    }

    /// Copies one particle buffer to a mapped staging buffer and returns its contents.
    fn read(&self, buffer: &wgpu::Buffer) -> Result<Vec<[f32; 4]>> {
        let gpu = &self.gpu;
        let bytes = (16 * self.particles).max(16) as u64;
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read back"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
        gpu.queue.submit([encoder.finish()]);
        let (send, receive) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = send.send(r);
        });
        gpu.finish()?;
        receive
            .recv()
            .map_err(|e| GpuError::Device(e.to_string()))?
            .map_err(|e| GpuError::Device(e.to_string()))?;
        let view = staging
            .get_mapped_range(..)
            .map_err(|e| GpuError::Device(e.to_string()))?;
        let data: &[[f32; 4]] = bytemuck::cast_slice(&view);
        Ok(data[..self.particles].to_vec())
    }
}
