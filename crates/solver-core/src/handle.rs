//! The handles a [`crate::World`] names its bodies and colliders by: on the ground floor, so
//! that an error can name a body the way the world does.

/// Names one body of a [`crate::World`] for as long as it is in the world (a removed body's
/// handle names nothing, and is never given to another body).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyHandle(pub(crate) u64);

/// Names one triangle-mesh collider of a [`crate::World`], as [`BodyHandle`] names a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColliderHandle(pub(crate) u64);

impl std::fmt::Display for BodyHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "body #{}", self.0)
    }
}

impl std::fmt::Display for ColliderHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "collider #{}", self.0)
    }
}
