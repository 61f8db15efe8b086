//! The [`SoftBody`] component and what the plugin gives an entity once its body is in the
//! world: a [`SoftBodyHandle`] and [`SoftBodyStats`].

use bevy::asset::RenderAssetUsages;
use bevy::ecs::component::Component;
use bevy::mesh::{Indices, Mesh, MeshVertexAttribute, PrimitiveTopology, VertexAttributeValues};
use bevy::platform::cell::SyncCell;
use bevy::prelude::{Handle, Transform};
use std::sync::Arc;
use wobble::core::effects::embedding::{Embedding, EmbeddingScratch, VertexNormals};
use wobble::core::mesh::TriMesh;
use wobble::core::BodyHandle;
use wobble::{Body, SolverKind, WobbleError};

/// A soft body or cloth to simulate. Spawn it on an entity (with a `Transform`); the plugin
/// moves the body into the [`WobbleWorld`](crate::WobbleWorld) in the next `Update`, bakes the
/// entity's transform into it (the body's particles are in world coordinates from then on,
/// and the entity's `Transform` is set to identity), and gives the entity a `Mesh3d` that it
/// rewrites after every step. A mesh asset that fails to load is refused
/// ([`WobbleEvent::Refused`](crate::WobbleEvent)).
#[derive(Component)]
#[require(Transform)]
pub struct SoftBody {
    pub(crate) source: SyncCell<Option<Source>>,
    /// The solver that steps it (built on the plugin's shared pool). Read when the body is
    /// added; afterwards change it through [`WobbleWorld`](crate::WobbleWorld)
    /// (`world().body_mut(handle)?.set_solver(..)`).
    pub solver: SolverKind,
    /// Record the residual after every iteration into [`SoftBodyStats::residuals`] (a pass
    /// over the constraints per iteration).
    pub record_residuals: bool,
    /// Self-collision within the body at this thickness (m), for cloth that folds on itself.
    pub self_collision: Option<f32>,
    /// A render mesh of its own (a Bevy mesh asset, placed by the entity's transform as the
    /// body is) that follows the body through wobble's embedding instead of showing the
    /// particles: a smooth high-resolution surface on a coarse body. Inside the tetrahedra of a
    /// tetrahedral body, on the surface of any other.
    pub render_mesh: Option<Handle<Mesh>>,
}

/// What a [`SoftBody`] is made from.
pub(crate) enum Source {
    Body(Box<Body>),
    Mesh(MeshBody),
}

impl SoftBody {
    /// A body made by any of wobble's builders (or a scene). The entity's translation moves
    /// it; a rotation or scale is refused (build the body rotated, `.rotated(q)`, instead),
    /// since its rest lengths and angles are already set.
    #[must_use]
    pub fn new(body: Body) -> Self {
        SoftBody::from_source(Source::Body(Box::new(body)))
    }

    /// A body made from a Bevy mesh asset once it is loaded ([`MeshBody`]).
    #[must_use]
    pub fn from_mesh(mesh: MeshBody) -> Self {
        SoftBody::from_source(Source::Mesh(mesh))
    }

    fn from_source(source: Source) -> Self {
        SoftBody {
            source: SyncCell::new(Some(source)),
            solver: SolverKind::Gs,
            record_residuals: false,
            self_collision: None,
            render_mesh: None,
        }
    }

    /// The same body stepped by `solver`.
    #[must_use]
    pub fn with_solver(mut self, solver: SolverKind) -> Self {
        self.solver = solver;
        self
    }

    /// The same body, its residuals recorded ([`SoftBody::record_residuals`]).
    #[must_use]
    pub fn recording_residuals(mut self) -> Self {
        self.record_residuals = true;
        self
    }

    /// The same body drawn with `mesh` embedded in it ([`SoftBody::render_mesh`]).
    #[must_use]
    pub fn with_render_mesh(mut self, mesh: Handle<Mesh>) -> Self {
        self.render_mesh = Some(mesh);
        self
    }

    /// The same body with self-collision at `thickness` (m).
    #[must_use]
    pub fn with_self_collision(mut self, thickness: f32) -> Self {
        self.self_collision = Some(thickness);
        self
    }
}

/// Which particles of a mesh body are pinned (held where they are).
#[derive(Clone, Default)]
pub enum Pins {
    /// None.
    #[default]
    None,
    /// Those whose value of this `Float32` vertex attribute is above 0.5.
    Attribute(MeshVertexAttribute),
    /// Those whose world position (after the entity's transform) passes the test.
    Where(Arc<dyn Fn(bevy::math::Vec3) -> bool + Send + Sync>),
}

/// What a mesh body is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MeshBodyKind {
    /// An open or closed sheet: one distance constraint per edge (compliance `stretch`) and,
    /// when `bending` is given, one bending link across each interior edge (that compliance).
    Cloth {
        /// Compliance of the edges (m/N; 0 = rigid).
        stretch: f32,
        /// Compliance of the bending links, or none.
        bending: Option<f32>,
    },
    /// A closed surface that keeps its volume (wobble's `SoftBody::from_mesh`).
    Closed,
}

/// A body from a Bevy `Mesh` asset: its positions (after the entity's transform) and triangle
/// indices become particles and triangles, vertices at the same place (a UV seam) welded into
/// one particle. The entity's `Mesh3d` becomes a copy of the asset (UVs and all), its
/// positions and normals rewritten every step.
#[derive(Clone)]
pub struct MeshBody {
    /// The asset.
    pub mesh: Handle<Mesh>,
    /// Total mass (kg), shared equally by the particles.
    pub mass: f32,
    /// Cloth or closed.
    pub kind: MeshBodyKind,
    /// The pinned particles.
    pub pins: Pins,
}

impl MeshBody {
    /// A cloth of 1 kg from `mesh`, stiff, with bending of compliance 1e-3, nothing pinned.
    #[must_use]
    pub fn cloth(mesh: Handle<Mesh>) -> Self {
        MeshBody {
            mesh,
            mass: 1.0,
            kind: MeshBodyKind::Cloth {
                stretch: 0.0,
                bending: Some(1e-3),
            },
            pins: Pins::None,
        }
    }

    /// A closed volume-keeping body of 1 kg from `mesh`.
    #[must_use]
    pub fn closed(mesh: Handle<Mesh>) -> Self {
        MeshBody {
            mesh,
            mass: 1.0,
            kind: MeshBodyKind::Closed,
            pins: Pins::None,
        }
    }

    /// The same with `pins`.
    #[must_use]
    pub fn pinned(mut self, pins: Pins) -> Self {
        self.pins = pins;
        self
    }

    /// The same with total mass `kg`.
    #[must_use]
    pub fn mass(mut self, kg: f32) -> Self {
        self.mass = kg;
        self
    }

    /// The body from the loaded `mesh` placed by `transform`, and for each vertex of the mesh
    /// the particle it became.
    pub(crate) fn build(
        &self,
        mesh: &Mesh,
        transform: &Transform,
    ) -> Result<(Body, Vec<u32>), WobbleError> {
        let (welded, remap) = placed_trimesh(mesh, transform)?;
        let mut body = match self.kind {
            MeshBodyKind::Cloth { stretch, bending } => {
                let mut body =
                    wobble::core::build::convert::body_from_trimesh(&welded, self.mass, stretch)?;
                if let Some(compliance) = bending {
                    wobble::core::build::add_bending_links(&mut body, compliance)?;
                }
                body
            }
            MeshBodyKind::Closed => wobble::SoftBody::from_mesh(welded)
                .mass(self.mass)
                .build()?,
        };
        let pinned: Vec<bool> = match &self.pins {
            Pins::None => Vec::new(),
            Pins::Where(test) => positions_of(mesh)?
                .into_iter()
                .map(|p| test(transform.transform_point(p)))
                .collect(),
            Pins::Attribute(attribute) => match mesh.attribute(attribute.id) {
                Some(VertexAttributeValues::Float32(values)) => {
                    values.iter().map(|&v| v > 0.5).collect()
                }
                Some(_) => {
                    return Err(bad_mesh(format!(
                        "pin attribute {} is not Float32",
                        attribute.name
                    )))
                }
                None => {
                    return Err(bad_mesh(format!(
                        "the mesh has no pin attribute {}",
                        attribute.name
                    )))
                }
            },
        };
        for (v, _) in pinned.iter().enumerate().filter(|(_, &p)| p) {
            body.particles_mut()
                .pin(remap[v] as usize)
                .map_err(|e| bad_mesh(e.to_string()))?;
        }
        Ok((body, remap))
    }
}

/// How a body's render mesh follows its particles.
pub(crate) enum Render {
    /// Render vertex `r` shows particle `map[r]`; `x` and `n` hold the particles' world
    /// positions and normals between frames.
    Particles {
        map: Vec<u32>,
        x: Vec<[f32; 3]>,
        n: Vec<wobble::glam::Vec3>,
    },
    /// A mesh of its own embedded in the body.
    Embedded(Box<Embedded>),
}

/// An embedded render mesh and the buffers its update reuses.
pub(crate) struct Embedded {
    embedding: Embedding,
    normals: VertexNormals,
    scratch: EmbeddingScratch,
    x: Vec<wobble::glam::Vec3>,
    n: Vec<wobble::glam::Vec3>,
}

impl Render {
    /// Render vertex `r` showing particle `map[r]`.
    pub(crate) fn particles(map: Vec<u32>) -> Render {
        Render::Particles {
            map,
            x: Vec::new(),
            n: Vec::new(),
        }
    }

    /// `asset`'s vertices, placed by `transform`, embedded in `body`.
    pub(crate) fn embedded(
        asset: &Mesh,
        transform: &Transform,
        body: &Body,
    ) -> Result<Render, WobbleError> {
        let origin = body.origin().as_vec3();
        let placed: Vec<wobble::glam::Vec3> = positions_of(asset)?
            .iter()
            .map(|&p| crate::to_wobble(transform.transform_point(p)) - origin)
            .collect();
        let topology = body.topology();
        let embedding = if topology.tets.is_empty() {
            Embedding::on_surface(&placed, &body.particles().x(), &topology.triangles)?
        } else {
            Embedding::in_tets(&placed, &body.particles().x(), &topology.tets)?
        };
        let triangles = triangles_of(asset, placed.len())?;
        Ok(Render::Embedded(Box::new(Embedded {
            embedding,
            normals: VertexNormals::new(&triangles, placed.len())?,
            scratch: EmbeddingScratch::default(),
            n: vec![wobble::glam::Vec3::ZERO; placed.len()],
            x: placed,
        })))
    }

    /// Writes `body`'s positions and normals, as this render shows them, into `mesh`.
    pub(crate) fn write(&mut self, mesh: &mut Mesh, body: &Body) -> Result<(), WobbleError> {
        let up = wobble::glam::Vec3::Y;
        match self {
            Render::Particles { map, x, n } => {
                x.resize(body.len(), [0.0; 3]);
                n.resize(body.len(), wobble::glam::Vec3::ZERO);
                body.positions_into(x)?;
                wobble::vertex_normals_into(&body.topology().triangles, &body.particles().x(), n)?;
                set_vectors(
                    mesh,
                    Mesh::ATTRIBUTE_POSITION,
                    map.iter().map(|&p| x[p as usize]),
                );
                set_vectors(
                    mesh,
                    Mesh::ATTRIBUTE_NORMAL,
                    map.iter()
                        .map(|&p| n[p as usize].normalize_or(up).to_array()),
                );
            }
            Render::Embedded(e) => {
                e.embedding
                    .update(&body.particles().x(), &mut e.x, &mut e.scratch)?;
                e.normals.compute(&e.x, &mut e.n)?;
                let origin = body.origin().as_vec3();
                set_vectors(
                    mesh,
                    Mesh::ATTRIBUTE_POSITION,
                    e.x.iter().map(|&p| (p + origin).to_array()),
                );
                set_vectors(
                    mesh,
                    Mesh::ATTRIBUTE_NORMAL,
                    e.n.iter().map(|n| n.normalize_or(up).to_array()),
                );
            }
        }
        Ok(())
    }
}

/// Sets `mesh`'s `attribute` to `values`: in place when it already holds as many `Float32x3`
/// values (every frame after the first), else anew.
fn set_vectors(
    mesh: &mut Mesh,
    attribute: MeshVertexAttribute,
    values: impl ExactSizeIterator<Item = [f32; 3]>,
) {
    if let Some(VertexAttributeValues::Float32x3(old)) = mesh.attribute_mut(attribute.id) {
        if old.len() == values.len() {
            for (o, v) in old.iter_mut().zip(values) {
                *o = v;
            }
            return;
        }
    }
    mesh.insert_attribute(attribute, values.collect::<Vec<_>>());
}

/// The triangles of a triangle-list `mesh` placed by `transform`, vertices at the same place
/// (a UV seam) welded, and for each vertex of `mesh` the one it became.
pub(crate) fn placed_trimesh(
    mesh: &Mesh,
    transform: &Transform,
) -> Result<(TriMesh, Vec<u32>), WobbleError> {
    let placed: Vec<wobble::glam::Vec3> = positions_of(mesh)?
        .into_iter()
        .map(|p| crate::to_wobble(transform.transform_point(p)))
        .collect();
    let triangles = triangles_of(mesh, placed.len())?;
    let raw = TriMesh::new(placed, triangles)?;
    let (lo, hi) = raw.bounds();
    Ok(raw.weld(1e-6 * (hi - lo).length().max(1.0)))
}

fn bad_mesh(detail: String) -> WobbleError {
    WobbleError::InvalidStructure {
        what: "bevy mesh",
        detail,
    }
}

/// A triangle-list mesh's positions.
fn positions_of(mesh: &Mesh) -> Result<Vec<bevy::math::Vec3>, WobbleError> {
    if mesh.primitive_topology() != PrimitiveTopology::TriangleList {
        return Err(bad_mesh(format!(
            "a soft body needs a triangle list, this mesh is a {:?}",
            mesh.primitive_topology()
        )));
    }
    match mesh.attribute(Mesh::ATTRIBUTE_POSITION) {
        Some(VertexAttributeValues::Float32x3(p)) => {
            Ok(p.iter().map(|&p| bevy::math::Vec3::from_array(p)).collect())
        }
        _ => Err(bad_mesh("the mesh has no Float32x3 positions".into())),
    }
}

/// A triangle-list mesh's triangles (its indices, or its vertices in threes).
fn triangles_of(mesh: &Mesh, vertices: usize) -> Result<Vec<[u32; 3]>, WobbleError> {
    let corners: Vec<u32> = match mesh.indices() {
        Some(indices) => indices.iter().map(|i| i as u32).collect(),
        None => (0..vertices as u32).collect(),
    };
    if !corners.len().is_multiple_of(3) {
        return Err(bad_mesh(format!(
            "{} indices is not a whole number of triangles",
            corners.len()
        )));
    }
    Ok(corners
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect())
}

/// The render mesh of a body built by a wobble builder: its particles, triangles and
/// normals, written by `render`.
pub(crate) fn mesh_of(body: &Body, render: &mut Render) -> Result<Mesh, WobbleError> {
    let mut mesh = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    );
    let triangles = &body.topology().triangles;
    if triangles.is_empty() {
        return Err(WobbleError::InvalidStructure {
            what: "soft body",
            detail: "the body has no triangles to draw (a rope?)".into(),
        });
    }
    mesh.insert_indices(Indices::U32(triangles.iter().flatten().copied().collect()));
    render.write(&mut mesh, body)?;
    Ok(mesh)
}

/// The body of an entity in the [`WobbleWorld`](crate::WobbleWorld).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftBodyHandle(pub BodyHandle);

/// What the last step did to an entity's body.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct SoftBodyStats {
    /// Mean stretch `|l - l0| / l0` of its structural distance constraints at the end of the
    /// step (wobble's `StepReport::stretch_mean`).
    pub stretch_mean: f32,
    /// The residual after each iteration of each substep of the last step, when recorded.
    pub residuals: Vec<f32>,
    /// Steps taken.
    pub steps: u64,
}
