//! What every solver's kernels share: buffers, one bind group layout per WGSL file (every
//! binding of the file, so one bind group serves all its entry points), pipelines by entry
//! point, and dispatches over any item count.

use crate::device::Gpu;
use wgpu::util::DeviceExt;

/// Threads per workgroup of the per-item kernels (`WG` in `common.wgsl`).
pub(crate) const WORKGROUP: u32 = 64;

/// Workgroups per dispatch row: a wider dispatch wraps into y (`flat_index` in `common.wgsl`).
const MAX_ROW: u32 = 65535;

/// The shared WGSL (parameters, index helper), prefixed to every file.
const COMMON: &str = include_str!("common.wgsl");

/// How a binding is used by a file's kernels.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Slot {
    /// A uniform buffer.
    Uniform,
    /// A storage buffer the kernels write.
    Storage,
    /// A storage buffer the kernels only read.
    Read,
}

/// The kernels of one WGSL file.
#[derive(Debug)]
pub(crate) struct Kernels {
    layout: wgpu::BindGroupLayout,
    pipelines: Vec<(&'static str, wgpu::ComputePipeline)>,
}

impl Kernels {
    /// Compiles `source` (after `common.wgsl`) with bindings `slots` (binding k = slot k of
    /// group 0) and a pipeline per entry point of `entries`.
    pub fn new(
        gpu: &Gpu,
        label: &str,
        source: &str,
        slots: &[Slot],
        entries: &[&'static str],
    ) -> Self {
        let device = &gpu.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(format!("{COMMON}\n{source}").into()),
        });
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = slots
            .iter()
            .enumerate()
            .map(|(k, slot)| wgpu::BindGroupLayoutEntry {
                binding: k as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match slot {
                        Slot::Uniform => wgpu::BufferBindingType::Uniform,
                        Slot::Storage => wgpu::BufferBindingType::Storage { read_only: false },
                        Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries: &layout_entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipelines = entries
            .iter()
            .map(|&entry| {
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: Some(&pipeline_layout),
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
                (entry, pipeline)
            })
            .collect();
        Kernels { layout, pipelines }
    }

    /// A bind group of `buffers`, binding k = buffer k.
    pub fn bind(&self, gpu: &Gpu, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(k, b)| wgpu::BindGroupEntry {
                binding: k as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &self.layout,
            entries: &entries,
        })
    }

    /// The pipeline of entry point `entry` (one of those given to [`Kernels::new`]).
    pub fn pipeline(&self, entry: &str) -> &wgpu::ComputePipeline {
        &self
            .pipelines
            .iter()
            .find(|(e, _)| *e == entry)
            .expect("entry points are fixed at compile time")
            .1
    }

    /// Records `entry` over `items` items (one thread each; nothing when there are none).
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass,
        bind: &wgpu::BindGroup,
        entry: &str,
        items: usize,
    ) {
        if items == 0 {
            return;
        }
        let groups = (items as u64).div_ceil(WORKGROUP as u64);
        let x = groups.min(MAX_ROW as u64);
        let y = groups.div_ceil(x);
        self.dispatch_groups(pass, bind, entry, x as u32, y as u32);
    }

    /// Records `entry` over `x` x `y` workgroups.
    pub fn dispatch_groups(
        &self,
        pass: &mut wgpu::ComputePass,
        bind: &wgpu::BindGroup,
        entry: &str,
        x: u32,
        y: u32,
    ) {
        pass.set_pipeline(self.pipeline(entry));
        pass.set_bind_group(0, bind, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }
}

/// A storage buffer holding `data` (at least 16 bytes: a binding is never empty), which
/// kernels read and write and copies may read from and write to.
pub(crate) fn storage<T: bytemuck::Pod>(gpu: &Gpu, label: &str, data: &[T]) -> wgpu::Buffer {
    let bytes: &[u8] = bytemuck::cast_slice(data);
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().max(16).next_multiple_of(4), 0);
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &padded,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        })
}

/// A zeroed storage buffer of `bytes` bytes (at least 16).
pub(crate) fn zeroed(gpu: &Gpu, label: &str, bytes: usize) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16) as u64,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A uniform buffer holding `value`.
pub(crate) fn uniform<T: bytemuck::Pod>(gpu: &Gpu, label: &str, value: &T) -> wgpu::Buffer {
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::bytes_of(value),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        })
}
