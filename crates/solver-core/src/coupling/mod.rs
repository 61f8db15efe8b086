//! Coupling of wobble bodies with other physics engines, each behind its own cargo feature:
//! [`rapier`] (feature `rapier`) steps a soft body together with a rapier3d world of rigid
//! bodies, both ways (contacts push the rigid bodies back, rigid bodies push the soft body).

pub mod rapier;
