//! The builders against bad input, and what their settings do.

use super::*;
use crate::error::WobbleError;
use glam::{Mat4, Quat, Vec3};

#[test]
fn the_structural_prefix_excludes_shear_and_bending_links() {
    let (cols, rows) = (6, 4);
    let cloth = Cloth::new()
        .resolution(cols, rows)
        .shear(1e-3)
        .bending(Bending::Links(1e-2))
        .build()
        .unwrap();
    let structural = rows * (cols - 1) + (rows - 1) * cols;
    assert_eq!(cloth.topology.structural, structural);
    let d = &cloth.constraints.distance;
    assert!(
        d.len() > structural + (rows - 1) * (cols - 1),
        "links were added"
    );
    assert!(d.compliance[..structural].iter().all(|&c| c == 0.0));
    assert!(d.compliance[structural..].iter().all(|&c| c > 0.0));
    let rope = Rope::new()
        .particles(10)
        .bending(Bending::Links(1e-3))
        .build()
        .unwrap();
    assert_eq!(
        (rope.topology.structural, rope.constraints.distance.len()),
        (9, 17)
    );
}

#[test]
fn placement_moves_rotates_and_pins_where_asked() {
    let turn = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    let flag = Flag::new()
        .resolution(5, 3)
        .size(2.0, 1.0)
        .at(Vec3::new(4.0, 2.0, 0.0))
        .rotated(turn)
        .build()
        .unwrap();
    // The fly (local +x) now points along world -z; the pole stays at x = 4.
    let tip = flag.particles.position(4);
    assert!((tip - Vec3::new(4.0, 2.0, -2.0)).length() < 1e-5, "{tip}");
    for j in 0..3 {
        assert_eq!(flag.particles.inv_mass(j * 5), 0.0);
        assert!(flag.particles.inv_mass(j * 5 + 1) > 0.0);
    }
    let m = Mat4::from_scale_rotation_translation(Vec3::splat(2.0), turn, Vec3::Z);
    let rope = Rope::new()
        .particles(3)
        .transform_mat4(m)
        .pin_where(|p| p.z < 0.5)
        .build()
        .unwrap();
    assert!((rope.particles.position(2) - Vec3::new(0.0, 0.0, -1.0)).length() < 1e-5);
    assert!(
        (rope.constraints.distance.rest[0] - 1.0).abs() < 1e-6,
        "rest lengths are placed"
    );
    let pinned: Vec<f32> = (0..3).map(|i| rope.particles.inv_mass(i)).collect();
    assert_eq!(pinned[0], 3.0);
    assert_eq!(&pinned[1..], &[0.0, 0.0]);
}

#[test]
fn a_mirroring_placement_keeps_volumes_positive() {
    let mirror = glam::Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let cube = TetBody::cube(1.0, 2).transform(mirror).build().unwrap();
    assert!(crate::figures::tet_volume(&cube.topology.tets, &cube.particles.x) > 0.99);
    let ball = SoftBody::sphere(1.0, 1).transform(mirror).build().unwrap();
    assert!(crate::figures::enclosed_volume(&ball.topology.triangles, &ball.particles.x) > 0.0);
}

#[test]
fn bad_settings_are_refused_with_what_is_wrong() {
    let msg = |r: Result<Body>| r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg(Cloth::new().resolution(1, 8).build()).contains("cloth columns"));
    assert!(msg(Cloth::new().size(f32::NAN, 1.0).build()).contains("cloth width"));
    assert!(msg(Cloth::new().mass(-1.0).build()).contains("mass"));
    assert!(msg(Cloth::new().stretch(-1e-3).build()).contains("stretch compliance"));
    assert!(msg(Cloth::new().shear(f32::INFINITY).build()).contains("shear compliance"));
    assert!(msg(Cloth::new().bending(Bending::Dihedral(-1.0)).build()).contains("bending"));
    assert!(matches!(
        Cloth::new().resolution(4, 4).pin(16).build(),
        Err(WobbleError::IndexOutOfRange {
            what: "pin",
            value: 16,
            len: 16,
            ..
        })
    ));
    assert!(matches!(
        Cloth::new().resolution(4, 4).pin_grid(4, 0).build(),
        Err(WobbleError::IndexOutOfRange { what: "pin", .. })
    ));
    assert!(msg(Flag::new().at(Vec3::NAN).build()).contains("transform"));
    assert!(msg(Flag::new()
        .transform(glam::Affine3A::from_scale(Vec3::ZERO))
        .build())
    .contains("invertible"));
    assert!(msg(Flag::new()
        .transform_mat4(Mat4::from_cols(
            glam::Vec4::ONE,
            glam::Vec4::Y,
            glam::Vec4::Z,
            glam::Vec4::W
        ))
        .build())
    .contains("affine"));
    assert!(msg(Flag::new()
        .wind(Some(crate::Wind {
            drag: -1.0,
            ..flag::flag_wind()
        }))
        .build())
    .contains("drag"));
    assert!(msg(Rope::new().particles(1).build()).contains("rope particles"));
    assert!(msg(Rope::new().bending(Bending::Dihedral(0.0)).build()).contains("Links"));
    assert!(msg(SoftBody::sphere(0.0, 1).build()).contains("radius"));
    assert!(msg(SoftBody::sphere(1.0, 1).pressure(0.0).build()).contains("pressure"));
    let open =
        crate::mesh::TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    assert!(msg(SoftBody::from_mesh(open).build()).contains("closed surface"));
    assert!(msg(TetBody::cube(0.5, 0).build()).contains("cube cells"));
    assert!(msg(TetBody::cube(-0.5, 2).build()).contains("cube size"));
    assert!(msg(TetBody::cube(1.0, 1).volume(f32::NAN).build()).contains("volume compliance"));
    let bad_sphere = Collider {
        shape: crate::Shape::Sphere {
            center: Vec3::ZERO,
            radius: -1.0,
        },
        friction: 0.0,
        restitution: 0.0,
        motion: None,
    };
    assert!(msg(TetBody::cube(1.0, 1).collider(bad_sphere).build()).contains("sphere"));
}
