//! What changes a body beside its constraints and colliders: [`tearing`] of over-stretched
//! constraints, [`plasticity`] of rest shapes, and the [`embedding`] of a render mesh in a
//! simulation mesh (the wind, a force the step applies, is [`crate::wind`]).

pub mod embedding;
pub mod plasticity;
pub mod tearing;
