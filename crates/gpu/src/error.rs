//! The GPU backend's error: no adapter, a device that refused, or the project's own errors.

use solver_core::WobbleError;

/// What can go wrong on the GPU backend.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No Vulkan, Metal or DX12 adapter was found (no driver, or none installed: on Debian,
    /// `mesa-vulkan-drivers` provides lavapipe, a software Vulkan device).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The adapter refused the device, a buffer or a kernel (a validation or out-of-memory
    /// error, with wgpu's message).
    #[error("GPU device error: {0}")]
    Device(String),
    /// A body or an option the GPU backend does not run (named in the message).
    #[error("not supported on the GPU backend: {0}")]
    Unsupported(String),
    /// Bad input or a diverged body, as on the CPU.
    #[error(transparent)]
    Wobble(#[from] WobbleError),
}

/// Results of the GPU backend.
pub type Result<T> = std::result::Result<T, GpuError>;
