//! Adapter discovery and the device: one [`Gpu`] per process is enough, shared by its bodies.

use crate::error::{GpuError, Result};
use std::sync::{Arc, Mutex};

/// What a test prints when it returns early because no adapter exists.
pub const SKIP_MESSAGE: &str = "skipped: no GPU adapter";

/// A device and its queue, with the adapter it came from.
#[derive(Clone, Debug)]
pub struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    /// The first error wgpu reported outside a call that returns one (a validation error in
    /// a recorded step), taken by the next call that can return it.
    errors: Arc<Mutex<Option<String>>>,
}

impl Gpu {
    /// The best adapter of Vulkan, Metal or DX12 (high-performance preference; a software
    /// adapter such as lavapipe when it is the only one), and its device with the adapter's
    /// own limits (large storage buffers for the million-particle cloth).
    pub fn new() -> Result<Self> {
        pollster::block_on(Self::request())
    }

    async fn request() -> Result<Self> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends &= wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
        let instance = wgpu::Instance::new(desc);
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("wobble"),
                required_features: wgpu::Features::empty(),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        let errors = Arc::new(Mutex::new(None));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut slot = sink.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert_with(|| e.to_string());
        }));
        Ok(Gpu {
            device,
            queue,
            info: adapter.get_info(),
            limits,
            errors,
        })
    }

    /// The adapter's name and driver, as `wobble step` prints them (e.g. `llvmpipe (LLVM
    /// 15.0.6, 256 bits) (llvmpipe, Mesa 22.3.6)`).
    pub fn adapter(&self) -> String {
        let i = &self.info;
        let driver = [i.driver.as_str(), i.driver_info.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        format!("{} ({driver}; {:?})", i.name, i.backend)
    }

    /// True for a software adapter (lavapipe, WARP): it runs the kernels on the CPU, so its
    /// timings say nothing of a GPU.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The adapter's limits (the device was requested with them).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// Waits until the device has run everything submitted, then returns the first error
    /// wgpu reported since the last check.
    pub fn finish(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Device(e.to_string()))?;
        self.check()
    }

    /// The first error wgpu reported since the last check, if any.
    pub(crate) fn check(&self) -> Result<()> {
        let mut slot = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        match slot.take() {
            Some(e) => Err(GpuError::Device(e)),
            None => Ok(()),
        }
    }
}
