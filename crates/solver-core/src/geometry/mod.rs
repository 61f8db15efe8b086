//! The ground floor: plain data and geometry that every other part stands on, importing
//! nothing above it (only [`crate::error`] and the thread helpers).
//!
//! - [`packed`]: [`Packed4`](packed::Packed4), a position packed with its inverse mass, and
//!   [`Xyz`](packed::Xyz), the vectors a read-back writes into.
//! - [`bvh`]: a triangle BVH refitted per frame, with ray, nearest-point and box queries.
//! - [`queries`]: segment-triangle crossings and closest points on triangles, in f64.
//! - [`volume`]: signed volumes of tetrahedra and closed surfaces, winding numbers.

pub mod bvh;
pub mod packed;
pub mod queries;
pub mod volume;
