//! Positions packed with a fourth component (`[x, y, z, w]`, 16-byte aligned), and the
//! three-component vectors a read-back writes into.

use crate::error::{Result, WobbleError};
use glam::Vec3;

/// A position packed with the particle's inverse mass in `w`; 16-byte aligned.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(C, align(16))]
pub struct Packed4 {
    /// x coordinate.
    pub x: f32,
    /// y coordinate.
    pub y: f32,
    /// z coordinate.
    pub z: f32,
    /// Inverse mass (0 = pinned) for positions; unused (0) for velocities.
    pub w: f32,
}

impl Packed4 {
    /// Packs a vector and a fourth component.
    #[inline]
    pub fn new(v: Vec3, w: f32) -> Self {
        Self {
            x: v.x,
            y: v.y,
            z: v.z,
            w,
        }
    }
    /// The xyz part as a glam vector.
    #[inline]
    pub fn xyz(self) -> Vec3 {
        Vec3::new(self.x, self.y, self.z)
    }
    /// Overwrites the xyz part, keeping w.
    #[inline]
    pub fn set_xyz(&mut self, v: Vec3) {
        self.x = v.x;
        self.y = v.y;
        self.z = v.z;
    }
    /// True when all four components are finite.
    #[inline]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z.is_finite() && self.w.is_finite()
    }
}

/// A three-component vector a read-back writes into: `[f32; 3]` (what vertex buffers hold),
/// glam's `Vec3` and `Vec3A`.
pub trait Xyz: Copy {
    /// The vector as glam's `Vec3`.
    fn get(self) -> Vec3;
    /// Overwrites the vector.
    fn set(&mut self, v: Vec3);
}

impl Xyz for [f32; 3] {
    #[inline]
    fn get(self) -> Vec3 {
        Vec3::from_array(self)
    }
    #[inline]
    fn set(&mut self, v: Vec3) {
        *self = v.to_array();
    }
}

impl Xyz for Vec3 {
    #[inline]
    fn get(self) -> Vec3 {
        self
    }
    #[inline]
    fn set(&mut self, v: Vec3) {
        *self = v;
    }
}

impl Xyz for glam::Vec3A {
    #[inline]
    fn get(self) -> Vec3 {
        self.into()
    }
    #[inline]
    fn set(&mut self, v: Vec3) {
        *self = v.into();
    }
}

/// Checks that a read-back buffer holds `len` entries.
pub fn check_buffer(what: &'static str, found: usize, len: usize) -> Result<()> {
    if found == len {
        Ok(())
    } else {
        Err(WobbleError::InvalidStructure {
            what,
            detail: format!(
                "the buffer holds {found} entries for {len} particles; it needs one per particle"
            ),
        })
    }
}
