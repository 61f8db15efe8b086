//! A raw mutable pointer that may cross threads: how the parallel passes and solvers hand
//! disjoint parts of one slice to several threads without splitting it first.

use std::ops::Range;

/// The start of a mutable slice, shareable between threads.
///
/// Whoever dereferences it must guarantee that no two threads touch the same element at the
/// same time; each use says why in a SAFETY comment.
#[derive(Debug)]
pub struct SharedMut<T>(*mut T);

// By hand: derived, both would need `T: Copy`, and the address is copied whatever `T` is.
impl<T> Clone for SharedMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedMut<T> {}

// SAFETY: the wrapper only carries the address; every dereference is an `unsafe` block whose
// caller guarantees disjoint access per thread (see the uses).
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above: shared use only hands out the address.
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// Wraps the start of a slice.
    pub fn new(slice: &mut [T]) -> Self {
        SharedMut(slice.as_mut_ptr())
    }

    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    #[inline(always)]
    pub fn get(self) -> *mut T {
        self.0
    }

    /// Elements `r` of the slice this came from.
    ///
    /// # Safety
    /// `r` lies within that slice, which outlives the use, and no other reference to these
    /// elements is used meanwhile.
    #[inline(always)]
    pub unsafe fn range<'a>(self, r: Range<usize>) -> &'a mut [T] {
        std::slice::from_raw_parts_mut(self.0.add(r.start), r.len())
    }
}
