//! What a user does to a body at run time: ray picking and dragging ([`picking`]), and the
//! Unity-style "jelly" mesh deformer ([`deformer`]) that pushes vertices with falloff forces.

pub mod deformer;
pub mod picking;
