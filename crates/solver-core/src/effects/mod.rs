//! What acts on a body beside its constraints and colliders: aerodynamic [`wind`],
//! [`tearing`] of over-stretched constraints, [`plasticity`] of rest shapes, and the
//! [`embedding`] of a render mesh in a simulation mesh.

pub mod embedding;
pub mod plasticity;
pub mod tearing;
