//! Colliders (plane, sphere, capsule, box, each with a checked constructor such as
//! [`Collider::sphere`]) and contact resolution as position constraints.
//!
//! Theory: a contact is the inequality `C(x) = sdf(x) >= 0`. A collider is kinematic (infinite
//! mass), so projecting it moves only the particle: `x += -min(sdf(x), 0) n`. It is projected
//! inside every solver iteration, after the solver's own constraints. Friction follows Macklin
//! et al. 2014 ("Unified particle physics", §6.1): the tangential displacement over the substep
//! `Δx_t` is cancelled whole when `|Δx_t| < μ d` (static) and by `μ d / |Δx_t|` otherwise, where
//! `d` is the penetration resolved. Restitution sets the outgoing normal velocity to
//! `-e v_n`, with `v_n` the approach velocity before the solve.
//!
//! Tunnelling: a particle whose predicted position lies beyond a thin collider (a 1 cm box
//! crossed at 20 m/s moves 33 cm in a substep of 1/60 s) is not near its surface at the end
//! of the substep, so the test of the predicted position alone misses it. [`find_contacts`]
//! also sweeps the segment from the substep's start to the prediction by sphere tracing (the
//! signed distances are exact or underestimates, so a step of `sdf(p)` never jumps over the
//! surface); where the segment first comes within the margin, the contact is frozen as the
//! tangent plane there ([`Contact::plane`]), which the iterations then keep the particle
//! in front of. A segment is traced only when `sdf(x) - |x - x₀| <= margin`, which the
//! 1-Lipschitz distance makes a necessary condition for a hit, so a resting or distant
//! particle pays nothing. A box contact whose particle starts the substep outside is always
//! frozen so: inside a box the signed distance leads to the nearest face, which for a particle
//! pushed past the middle of a thin box is the far one.
//!
//! Moving colliders: a collider given the shape it has at the end of the next step
//! ([`Collider::move_to`], [`crate::Body::move_collider`]: a character's body proxy following
//! its skeleton) is interpolated across the step's substeps, each substep's contacts taken
//! against its shape at the substep's end. Friction acts on the particle's motion relative to
//! the surface (the surface point's displacement over the substep, [`Shape::surface_motion`],
//! is taken off the particle's before the tangential part is cancelled), and restitution on
//! the normal velocity relative to it, so that a cloth resting on a moving arm moves with it.
//! After the step the collider has its new shape.

use crate::error::{check_parameter, Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::{DVec3, Quat, Vec3};

/// The geometry of a collider.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Shape {
    /// Half-space `n · x >= offset` is free; `normal` must be unit length.
    Plane {
        /// Unit normal, pointing into the free side.
        normal: Vec3,
        /// `n · x` on the plane.
        offset: f32,
    },
    /// A solid sphere.
    Sphere {
        /// Centre.
        center: Vec3,
        /// Radius (m).
        radius: f32,
    },
    /// A solid capsule around the segment `a`-`b`.
    Capsule {
        /// One end of the axis segment.
        a: Vec3,
        /// The other end of the axis segment.
        b: Vec3,
        /// Radius around the segment (m).
        radius: f32,
    },
    /// A solid box with half extents `half`, rotated by `rotation` about `center`.
    Cuboid {
        /// Centre.
        center: Vec3,
        /// Half extents along the box's own axes.
        half: Vec3,
        /// Rotation from the box's axes to the world's.
        rotation: Quat,
    },
}

/// A kinematic collider with friction and restitution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collider {
    /// The geometry.
    pub shape: Shape,
    /// Coulomb friction coefficient μ (static and kinetic).
    pub friction: f32,
    /// Restitution e in [0, 1].
    pub restitution: f32,
    /// The shape at the end of the next step, of the same kind, when the collider moves
    /// (see the [module](self) doc); `None` for one that stays put.
    pub motion: Option<Shape>,
}

/// A particle near a collider during one substep.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Contact {
    /// The particle.
    pub particle: u32,
    /// Index of the collider in the body's list.
    pub collider: u32,
    /// Normal velocity before the solve (negative when approaching).
    pub approach: f32,
    /// Total normal correction applied this substep (the penetration resolved).
    pub pushed: f32,
    /// `Some((n, offset))`: the contact is the half-space `n · x >= offset` frozen for the
    /// substep (a swept hit, see the module doc); `None`: the collider's own signed distance.
    pub plane: Option<(Vec3, f32)>,
    /// How far the collider's surface at the particle moved over the substep (zero for a
    /// collider that stays put).
    pub surface: Vec3,
}

impl Contact {
    /// Signed distance of `p` from the contact's surface (negative inside) and its normal.
    #[inline]
    pub fn distance(&self, colliders: &[Collider], p: Vec3) -> (f32, Vec3) {
        match self.plane {
            Some((n, offset)) => (n.dot(p) - offset, n),
            None => colliders[self.collider as usize].shape.signed_distance(p),
        }
    }
}

/// Most sphere-tracing steps of one swept test (a segment that grazes a surface at a distance
/// just above the margin needs the most; one not resolved within them is taken as a miss).
const MAX_TRACE_STEPS: usize = 64;

/// Where the segment `from`-`to` first comes within `margin` of `shape`, as the frozen plane
/// `(n, offset)` there, by sphere tracing; `None` when it never does.
pub fn sweep(shape: &Shape, from: Vec3, to: Vec3, margin: f32) -> Option<(Vec3, f32)> {
    let seg = to - from;
    let len = seg.length();
    let dir = if len > 0.0 { seg / len } else { Vec3::ZERO };
    let mut t = 0.0f32;
    for _ in 0..MAX_TRACE_STEPS {
        let p = from + dir * t;
        let (d, n) = shape.signed_distance(p);
        if d < margin {
            // The tangent plane of the surface point nearest `p`.
            return Some((n, n.dot(p) - d));
        }
        t += d.max(1e-6 * len.max(1e-3));
        if t > len {
            return None;
        }
    }
    None
}

impl Shape {
    /// The shape a fraction `t` of the way from `self` to `to` (of the same kind; `to` as it
    /// is otherwise): positions and sizes blended linearly, a plane's normal and a box's
    /// rotation along the arc.
    #[must_use]
    pub fn lerp(&self, to: &Shape, t: f32) -> Shape {
        match (*self, *to) {
            (
                Shape::Plane { normal, offset },
                Shape::Plane {
                    normal: n1,
                    offset: o1,
                },
            ) => Shape::Plane {
                normal: normal.lerp(n1, t).normalize_or(n1),
                offset: offset + (o1 - offset) * t,
            },
            (
                Shape::Sphere { center, radius },
                Shape::Sphere {
                    center: c1,
                    radius: r1,
                },
            ) => Shape::Sphere {
                center: center.lerp(c1, t),
                radius: radius + (r1 - radius) * t,
            },
            (
                Shape::Capsule { a, b, radius },
                Shape::Capsule {
                    a: a1,
                    b: b1,
                    radius: r1,
                },
            ) => Shape::Capsule {
                a: a.lerp(a1, t),
                b: b.lerp(b1, t),
                radius: radius + (r1 - radius) * t,
            },
            (
                Shape::Cuboid {
                    center,
                    half,
                    rotation,
                },
                Shape::Cuboid {
                    center: c1,
                    half: h1,
                    rotation: q1,
                },
            ) => Shape::Cuboid {
                center: center.lerp(c1, t),
                half: half.lerp(h1, t),
                rotation: rotation.normalize().slerp(q1.normalize(), t),
            },
            _ => *to,
        }
    }

    /// The displacement, from shape `from` to shape `to`, of the surface point nearest `p`
    /// (on `to`): a sphere's centre's, the capsule's axis point's (the ends' displacements
    /// blended at `p`'s place along the axis), a box's rigid motion at `p`, a plane's offset
    /// along its normal. Zero between shapes of different kinds.
    #[must_use]
    pub fn surface_motion(from: &Shape, to: &Shape, p: Vec3) -> Vec3 {
        match (*from, *to) {
            (Shape::Plane { offset: o0, .. }, Shape::Plane { normal, offset }) => {
                normal * (offset - o0)
            }
            (Shape::Sphere { center: c0, .. }, Shape::Sphere { center, .. }) => center - c0,
            (Shape::Capsule { a: a0, b: b0, .. }, Shape::Capsule { a, b, .. }) => {
                let ab = b - a;
                let u =
                    ((p - a).dot(ab) / ab.length_squared().max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
                (a - a0).lerp(b - b0, u)
            }
            (
                Shape::Cuboid {
                    center: c0,
                    rotation: q0,
                    ..
                },
                Shape::Cuboid {
                    center, rotation, ..
                },
            ) => p - (c0 + q0 * (rotation.inverse() * (p - center))),
            _ => Vec3::ZERO,
        }
    }

    /// True when `other` is the same kind of shape.
    fn same_kind(&self, other: &Shape) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// The shape with its world coordinates re-expressed relative to `origin` (each computed
    /// in `f64`, rounded once): the body frame of a body whose origin that is.
    #[must_use]
    pub fn moved_into_frame(&self, origin: DVec3) -> Shape {
        let local = |p: Vec3| (p.as_dvec3() - origin).as_vec3();
        match *self {
            Shape::Plane { normal, offset } => Shape::Plane {
                normal,
                offset: (offset as f64 - normal.as_dvec3().dot(origin)) as f32,
            },
            Shape::Sphere { center, radius } => Shape::Sphere {
                center: local(center),
                radius,
            },
            Shape::Capsule { a, b, radius } => Shape::Capsule {
                a: local(a),
                b: local(b),
                radius,
            },
            Shape::Cuboid {
                center,
                half,
                rotation,
            } => Shape::Cuboid {
                center: local(center),
                half,
                rotation,
            },
        }
    }

    /// Signed distance from `p` to the surface (negative inside) and the outward normal there.
    #[inline]
    pub fn signed_distance(&self, p: Vec3) -> (f32, Vec3) {
        match *self {
            Shape::Plane { normal, offset } => (normal.dot(p) - offset, normal),
            Shape::Sphere { center, radius } => {
                let d = p - center;
                let len = d.length();
                let n = if len > 0.0 { d / len } else { Vec3::Y };
                (len - radius, n)
            }
            Shape::Capsule { a, b, radius } => {
                let ab = b - a;
                let t =
                    ((p - a).dot(ab) / ab.length_squared().max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
                let d = p - (a + ab * t);
                let len = d.length();
                let n = if len > 0.0 { d / len } else { Vec3::Y };
                (len - radius, n)
            }
            Shape::Cuboid {
                center,
                half,
                rotation,
            } => {
                let local = rotation.inverse() * (p - center);
                let q = local.abs() - half;
                let outside = q.max(Vec3::ZERO);
                let out_len = outside.length();
                let (dist, n_local) = if out_len > 0.0 {
                    (out_len, outside * local.signum() / out_len)
                } else {
                    // Inside: leave through the nearest face.
                    let axis = if q.x >= q.y && q.x >= q.z {
                        Vec3::X
                    } else if q.y >= q.z {
                        Vec3::Y
                    } else {
                        Vec3::Z
                    };
                    (q.max_element(), axis * local.dot(axis).signum())
                };
                (dist, rotation * n_local)
            }
        }
    }

    /// Checks that the shape is finite and non-degenerate.
    pub fn validate(&self, index: usize) -> Result<()> {
        let bad = |reason: &'static str| WobbleError::BadParameter {
            name: "collider",
            value: index as f64,
            reason,
        };
        let finite = |v: Vec3| v.is_finite();
        match *self {
            Shape::Plane { normal, offset } => {
                if !finite(normal) || !offset.is_finite() || (normal.length() - 1.0).abs() > 1e-3 {
                    return Err(bad("plane needs a finite unit normal and a finite offset"));
                }
            }
            Shape::Sphere { center, radius } => {
                if !(finite(center) && radius.is_finite() && radius > 0.0) {
                    return Err(bad("sphere needs a finite centre and a radius > 0"));
                }
            }
            Shape::Capsule { a, b, radius } => {
                if !(finite(a) && finite(b) && radius.is_finite() && radius > 0.0) {
                    return Err(bad("capsule needs finite end points and a radius > 0"));
                }
            }
            Shape::Cuboid {
                center,
                half,
                rotation,
            } => {
                if !finite(center)
                    || !half.is_finite()
                    || half.min_element() <= 0.0
                    || !rotation.is_finite()
                {
                    return Err(bad(
                        "box needs a finite centre, half extents > 0 and a finite rotation",
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Collider {
    /// The collider in the frame whose zero is the world position `origin`
    /// ([`Shape::moved_into_frame`]).
    #[must_use]
    pub fn moved_into_frame(&self, origin: DVec3) -> Collider {
        Collider {
            shape: self.shape.moved_into_frame(origin),
            motion: self.motion.map(|m| m.moved_into_frame(origin)),
            ..*self
        }
    }

    /// The ground plane y = 0.
    pub fn ground(friction: f32, restitution: f32) -> Self {
        Collider {
            shape: Shape::Plane {
                normal: Vec3::Y,
                offset: 0.0,
            },
            friction,
            restitution,
            motion: None,
        }
    }

    /// A collider of `shape` with the standard scenes' ground contact: friction 0.5,
    /// restitution 0; the shape and coefficients are checked.
    fn checked(shape: Shape) -> Result<Self> {
        Collider {
            shape,
            friction: 0.5,
            restitution: 0.0,
            motion: None,
        }
        .validated()
    }

    /// The collider, once [`Collider::validate`] passes.
    fn validated(self) -> Result<Self> {
        self.validate(0)?;
        Ok(self)
    }

    /// The half-space `normal · x >= offset` is free (`normal` need not be unit length; it is
    /// normalised). Friction 0.5, restitution 0 (change them with
    /// [`Collider::with_friction`] and [`Collider::with_restitution`]).
    pub fn plane(normal: Vec3, offset: f32) -> Result<Self> {
        let len = normal.length();
        let reason = "a plane needs a finite, non-zero normal";
        check_parameter("plane normal length", len, len > 0.0, reason)?;
        Self::checked(Shape::Plane {
            normal: normal / len,
            offset: offset / len,
        })
    }

    /// A solid sphere; friction 0.5, restitution 0.
    pub fn sphere(center: Vec3, radius: f32) -> Result<Self> {
        check_radius("sphere radius", radius)?;
        Self::checked(Shape::Sphere { center, radius })
    }

    /// A solid capsule of `radius` around the segment `a`-`b`; friction 0.5, restitution 0.
    pub fn capsule(a: Vec3, b: Vec3, radius: f32) -> Result<Self> {
        check_radius("capsule radius", radius)?;
        Self::checked(Shape::Capsule { a, b, radius })
    }

    /// A solid box of half extents `half` about `center`, turned by `rotation` (normalised);
    /// friction 0.5, restitution 0.
    pub fn cuboid(center: Vec3, half: Vec3, rotation: Quat) -> Result<Self> {
        let len = rotation.length();
        let reason = "a box needs a finite, non-zero rotation quaternion";
        check_parameter("box rotation length", len, len > 0.0, reason)?;
        let (shortest, reason) = (
            half.min_element(),
            "every half extent must be finite and > 0 (metres)",
        );
        check_parameter(
            "box half extent",
            shortest,
            half.is_finite() && shortest > 0.0,
            reason,
        )?;
        Self::checked(Shape::Cuboid {
            center,
            half,
            rotation: rotation / len,
        })
    }

    /// The same collider with Coulomb friction `mu` (finite, >= 0).
    pub fn with_friction(mut self, mu: f32) -> Result<Self> {
        self.friction = mu;
        self.validated()
    }

    /// The same collider with restitution `e` (in [0, 1]).
    pub fn with_restitution(mut self, e: f32) -> Result<Self> {
        self.restitution = e;
        self.validated()
    }

    /// Sets the shape the collider has at the end of the next step (of the same kind as its
    /// shape, finite and non-degenerate): the step moves it there across its substeps.
    pub fn move_to(&mut self, shape: Shape) -> Result<()> {
        Collider {
            motion: Some(shape),
            ..*self
        }
        .validate(0)?;
        self.motion = Some(shape);
        Ok(())
    }

    /// The collider a fraction `t` of the way through the step: its shape interpolated
    /// towards its motion (as it is when it has none), with no motion.
    #[must_use]
    pub fn at(&self, t: f32) -> Collider {
        Collider {
            shape: self.motion.map_or(self.shape, |m| self.shape.lerp(&m, t)),
            motion: None,
            ..*self
        }
    }

    /// Checks shape, motion and coefficients.
    pub fn validate(&self, index: usize) -> Result<()> {
        self.shape.validate(index)?;
        if let Some(m) = &self.motion {
            m.validate(index)?;
            if !self.shape.same_kind(m) {
                return Err(WobbleError::BadParameter {
                    name: "collider",
                    value: index as f64,
                    reason: "a collider's motion must be a shape of its own kind",
                });
            }
        }
        crate::error::check_non_negative("friction", self.friction)?;
        if !(0.0..=1.0).contains(&self.restitution) {
            return Err(WobbleError::BadParameter {
                name: "restitution",
                value: self.restitution as f64,
                reason: "must be in [0, 1]",
            });
        }
        Ok(())
    }
}

fn check_radius(name: &'static str, radius: f32) -> Result<()> {
    check_parameter(
        name,
        radius,
        radius > 0.0,
        "must be finite and > 0 (metres)",
    )
}

/// Finds the particles that may touch a collider during this substep: those whose predicted
/// position `x` lies within `margin` of a surface, and those whose path from the substep's
/// start `x_prev` crosses one ([`sweep`]). `start` holds the colliders as they were at the
/// substep's start, where some moved (`None`: none did); `inv_h` is 1 / the substep's length.
/// Clears and fills `out`.
#[allow(clippy::too_many_arguments)]
pub fn find_contacts(
    colliders: &[Collider],
    start: Option<&[Collider]>,
    x: &[Packed4],
    x_prev: &[Packed4],
    v: &[Packed4],
    margin: f32,
    inv_h: f32,
    out: &mut Vec<Contact>,
) {
    out.clear();
    if colliders.is_empty() {
        return;
    }
    for (i, p) in x.iter().enumerate() {
        if p.w == 0.0 {
            continue;
        }
        for (c, col) in colliders.iter().enumerate() {
            let (d, n) = col.shape.signed_distance(p.xyz());
            let surface = start.map_or(Vec3::ZERO, |s| {
                Shape::surface_motion(&s[c].shape, &col.shape, p.xyz())
            });
            let relative = v[i].xyz() - surface * inv_h;
            let mut contact = Contact {
                particle: i as u32,
                collider: c as u32,
                approach: relative.dot(n),
                pushed: 0.0,
                plane: None,
                surface,
            };
            let from = x_prev[i].xyz();
            // Inside a box the nearest face is the surface, so a particle pressed past the
            // middle of a thin box would leave through the far face: a box contact that began
            // outside keeps the plane it entered by.
            let thin_side = matches!(col.shape, Shape::Cuboid { .. })
                && col.shape.signed_distance(from).0 >= 0.0;
            if d < margin && !thin_side {
                out.push(contact);
                continue;
            }
            if d - (p.xyz() - from).length() > margin {
                continue;
            }
            if let Some((n, offset)) = sweep(&col.shape, from, p.xyz(), margin) {
                contact.approach = relative.dot(n);
                contact.plane = Some((n, offset));
                out.push(contact);
            }
        }
    }
}

/// Pushes every penetrating contact particle out to the surface (one iteration's worth).
#[inline]
pub fn project_contacts(colliders: &[Collider], contacts: &mut [Contact], x: &mut [Packed4]) {
    for c in contacts.iter_mut() {
        let p = &mut x[c.particle as usize];
        let (d, n) = c.distance(colliders, p.xyz());
        if d < 0.0 {
            p.set_xyz(p.xyz() - n * d);
            c.pushed -= d;
        }
    }
}

/// Applies Coulomb friction to the contacts that ended the solve touching their collider.
pub fn apply_friction(
    colliders: &[Collider],
    contacts: &[Contact],
    x: &mut [Packed4],
    x_prev: &[Packed4],
) {
    for c in contacts {
        let col = &colliders[c.collider as usize];
        if col.friction <= 0.0 || c.pushed <= 0.0 {
            continue;
        }
        let i = c.particle as usize;
        let (d, n) = c.distance(colliders, x[i].xyz());
        if d > 1e-6 {
            continue;
        }
        let dx = x[i].xyz() - x_prev[i].xyz() - c.surface;
        let tangential = dx - n * dx.dot(n);
        let t_len = tangential.length();
        if t_len <= 0.0 {
            continue;
        }
        let limit = col.friction * c.pushed;
        let scale = if t_len < limit {
            1.0
        } else {
            (limit / t_len).min(1.0)
        };
        x[i].set_xyz(x[i].xyz() - tangential * scale);
    }
}

/// After the velocity update: gives bouncing contacts their restitution velocity, relative to
/// the surface's (`inv_h` = 1 / the substep's length).
pub fn apply_restitution(
    colliders: &[Collider],
    contacts: &[Contact],
    x: &[Packed4],
    v: &mut [Packed4],
    threshold: f32,
    inv_h: f32,
) {
    for c in contacts {
        let col = &colliders[c.collider as usize];
        if c.pushed <= 0.0 || c.approach >= -threshold {
            continue;
        }
        let i = c.particle as usize;
        let (_, n) = c.distance(colliders, x[i].xyz());
        let vel = v[i].xyz();
        let vn = vel.dot(n);
        let target = (c.surface * inv_h).dot(n) - col.restitution * c.approach;
        v[i].set_xyz(vel + n * (target - vn));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_build_every_shape_and_refuse_bad_ones() {
        let plane = Collider::plane(Vec3::new(0.0, 2.0, 0.0), 1.0).unwrap();
        assert_eq!(plane.shape.signed_distance(Vec3::new(3.0, 1.5, 0.0)).0, 1.0);
        let sphere = Collider::sphere(Vec3::Y, 0.5).unwrap();
        assert_eq!(sphere.shape.signed_distance(Vec3::ZERO).0, 0.5);
        let capsule = Collider::capsule(Vec3::ZERO, Vec3::X, 0.25).unwrap();
        assert_eq!(
            capsule.shape.signed_distance(Vec3::new(0.5, 1.0, 0.0)).0,
            0.75
        );
        let turned = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2) * 3.0;
        let cuboid = Collider::cuboid(Vec3::ZERO, Vec3::new(2.0, 1.0, 1.0), turned).unwrap();
        // Turned a quarter about z, the long axis runs along y.
        assert!((cuboid.shape.signed_distance(Vec3::new(0.0, 2.5, 0.0)).0 - 0.5).abs() < 1e-5);
        let slick = sphere
            .with_friction(0.0)
            .unwrap()
            .with_restitution(1.0)
            .unwrap();
        assert_eq!((slick.friction, slick.restitution), (0.0, 1.0));

        let err = |r: Result<Collider>| r.unwrap_err().to_string();
        assert!(err(Collider::plane(Vec3::ZERO, 0.0)).contains("plane normal"));
        assert!(err(Collider::plane(Vec3::Y, f32::NAN)).contains("plane"));
        assert!(err(Collider::sphere(Vec3::ZERO, -1.0)).contains("sphere radius"));
        assert!(err(Collider::sphere(Vec3::NAN, 1.0)).contains("sphere"));
        assert!(err(Collider::capsule(Vec3::ZERO, Vec3::INFINITY, 1.0)).contains("capsule"));
        assert!(err(Collider::capsule(Vec3::ZERO, Vec3::X, 0.0)).contains("capsule radius"));
        assert!(err(Collider::cuboid(
            Vec3::ZERO,
            Vec3::ONE,
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)
        ))
        .contains("rotation"));
        assert!(err(Collider::cuboid(
            Vec3::ZERO,
            Vec3::new(1.0, 0.0, 1.0),
            Quat::IDENTITY
        ))
        .contains("half extent"));
        assert!(err(sphere.with_friction(-0.1)).contains("friction"));
        assert!(err(sphere.with_restitution(1.5)).contains("restitution"));
    }
}
