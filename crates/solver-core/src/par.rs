//! Data-parallel slice iteration: rayon's with the `parallel` feature, and otherwise the same
//! method names over the standard sequential iterators, so that the `_parallel` variants of
//! the mesh and effect passes compile (and give the same bits) in a build without threads.

#[cfg(feature = "parallel")]
pub(crate) use rayon::prelude::*;

#[cfg(not(feature = "parallel"))]
pub(crate) use serial::*;

#[cfg(not(feature = "parallel"))]
mod serial {
    /// `par_chunks` and `par_iter` as their sequential counterparts.
    pub(crate) trait ParallelSlice<T> {
        fn par_chunks(&self, size: usize) -> std::slice::Chunks<'_, T>;
    }

    /// `par_chunks_mut` and `par_iter_mut` as their sequential counterparts.
    pub(crate) trait ParallelSliceMut<T> {
        fn par_chunks_mut(&mut self, size: usize) -> std::slice::ChunksMut<'_, T>;
        fn par_iter_mut(&mut self) -> std::slice::IterMut<'_, T>;
    }

    impl<T> ParallelSlice<T> for [T] {
        fn par_chunks(&self, size: usize) -> std::slice::Chunks<'_, T> {
            self.chunks(size)
        }
    }

    impl<T> ParallelSliceMut<T> for [T] {
        fn par_chunks_mut(&mut self, size: usize) -> std::slice::ChunksMut<'_, T> {
            self.chunks_mut(size)
        }
        fn par_iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
            self.iter_mut()
        }
    }
}
