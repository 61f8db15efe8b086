//! The thread pool of the parallel solvers: a cheap handle that several solvers (one per body)
//! may share through [`crate::SolverOptions::pool`], so that a world of bodies runs on one set
//! of threads instead of a pool per body.
//!
//! Work is always cut into blocks whose boundaries depend only on the problem (never on the
//! thread count), and each block computes exactly what the serial loop over the same blocks
//! computes; so 1, 2 or N threads give bitwise-identical results.

pub(crate) use backend::Rayon;
use solver_core::{Executor, WobbleError};
use std::sync::Arc;

/// Fewest blocks of the step loop's particle passes worth handing to the threads: waking a
/// sleeping rayon worker costs tens of microseconds on a virtual machine, more than a pass over
/// a few thousand particles.
pub const MIN_PARALLEL_BLOCKS: usize = 4;

/// Largest accepted thread count.
pub const MAX_THREADS: usize = 1024;

/// A rayon pool with a fixed number of threads, or none for serial work. Cloning it gives
/// another handle to the same threads.
///
/// Solvers sharing a pool must be stepped one after the other (as a game loop steps its
/// bodies), each step using all the threads; stepping two bodies at once from two threads on
/// one pool is safe but makes them wait for each other.
#[derive(Debug, Clone)]
pub struct Pool {
    pool: Option<Arc<Rayon>>,
    /// The same pool as the step loop's executor, made once (a step asks for it every time).
    executor: Option<Arc<PoolExecutor>>,
    threads: usize,
}

impl PartialEq for Pool {
    /// Two handles are equal when they run on the same threads.
    fn eq(&self, other: &Self) -> bool {
        self.threads == other.threads
            && match (&self.pool, &other.pool) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

impl Pool {
    /// A pool of `threads` threads; 1 runs everything on the caller's thread.
    pub fn new(threads: usize) -> Result<Self, WobbleError> {
        if threads == 0 || threads > MAX_THREADS {
            return Err(WobbleError::BadCount {
                name: "threads",
                value: threads as u64,
                max: MAX_THREADS as u64,
            });
        }
        let pool = if threads > 1 {
            Some(Arc::new(backend::build(threads)?))
        } else {
            None
        };
        let executor = pool
            .as_ref()
            .map(|p| Arc::new(PoolExecutor { pool: p.clone() }));
        Ok(Pool {
            pool,
            executor,
            threads,
        })
    }

    /// Number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The rayon pool (`None` when serial).
    pub(crate) fn rayon(&self) -> Option<&Rayon> {
        self.pool.as_deref()
    }

    /// The pool as the step loop's executor (`None` when serial).
    pub fn executor(&self) -> Option<Arc<dyn Executor>> {
        self.executor.clone().map(|e| e as Arc<dyn Executor>)
    }

    /// The pool as a world's executor (`solver_core::World::set_executor`): its threads, or
    /// for one thread the caller's alone ([`solver_core::Serial`]), where a world without an
    /// executor would use rayon's current pool instead.
    #[must_use]
    pub fn world_executor(&self) -> Arc<dyn Executor> {
        self.executor()
            .unwrap_or_else(|| Arc::new(solver_core::Serial))
    }

    /// Runs `f(block)` for every block in `0..blocks`: in parallel when the pool has threads and
    /// `parallel` is true, else in order on this thread.
    ///
    /// Every block is a task of its own (`with_max_len(1)`): rayon's adaptive split otherwise
    /// hands each thread runs of several blocks that cannot be stolen, and with 16 tiles of
    /// ~100 µs one thread waited 55-180 µs per iteration for the other's last run (n = 512).
    #[inline]
    pub fn for_each_block(&self, blocks: usize, parallel: bool, f: impl Fn(usize) + Sync + Send) {
        match &self.pool {
            Some(pool) if parallel && blocks > 1 => backend::blocks(pool, blocks, &f),
            _ => (0..blocks).for_each(f),
        }
    }
}

impl Pool {
    /// Runs `f(block, chunk)` over `data` cut into chunks of `chunk` elements.
    #[inline]
    pub fn for_each_chunk_mut<T: Send>(
        &self,
        data: &mut [T],
        chunk: usize,
        parallel: bool,
        f: impl Fn(usize, &mut [T]) + Sync + Send,
    ) {
        match &self.pool {
            Some(pool) if parallel && data.len() > chunk => {
                backend::chunks_mut(pool, data, chunk, &f)
            }
            _ => data
                .chunks_mut(chunk)
                .enumerate()
                .for_each(|(b, d)| f(b, d)),
        }
    }

    /// Runs `f(block, chunk_a, chunk_b)` over two equally long slices cut alike.
    #[inline]
    pub fn for_each_chunk_mut2<A: Send, B: Send>(
        &self,
        a: &mut [A],
        b: &mut [B],
        chunk: usize,
        parallel: bool,
        f: impl Fn(usize, &mut [A], &mut [B]) + Sync + Send,
    ) {
        assert_eq!(a.len(), b.len(), "slices cut alike");
        match &self.pool {
            Some(pool) if parallel && a.len() > chunk => {
                backend::chunks_mut2(pool, a, b, chunk, &f)
            }
            _ => a
                .chunks_mut(chunk)
                .zip(b.chunks_mut(chunk))
                .enumerate()
                .for_each(|(k, (da, db))| f(k, da, db)),
        }
    }

    /// `out[block] = f(block)` for every block; `out` is reused.
    #[inline]
    pub fn map_blocks(
        &self,
        blocks: usize,
        parallel: bool,
        out: &mut Vec<f64>,
        f: impl Fn(usize) -> f64 + Sync + Send,
    ) {
        match &self.pool {
            Some(pool) if parallel && blocks > 1 => backend::map(pool, blocks, out, &f),
            _ => {
                out.clear();
                out.extend((0..blocks).map(f));
            }
        }
    }
}

/// A pool as the step loop's [`Executor`].
#[derive(Debug)]
struct PoolExecutor {
    pool: Arc<Rayon>,
}

impl Executor for PoolExecutor {
    fn run_home(&self, f: &mut (dyn FnMut() + Send)) {
        backend::install(&self.pool, f)
    }

    /// On the threads when there are enough blocks to be worth a hand-off, one task per block.
    fn run_blocks(&self, blocks: usize, f: &(dyn Fn(usize) + Sync)) {
        if blocks >= MIN_PARALLEL_BLOCKS {
            backend::blocks(&self.pool, blocks, f)
        } else {
            (0..blocks).for_each(f)
        }
    }
}

pub(crate) use solver_core::shared_mut::SharedMut;

/// The threads themselves: rayon with the `parallel` feature.
#[cfg(feature = "parallel")]
mod backend {
    use rayon::prelude::*;
    use solver_core::WobbleError;

    /// A rayon pool.
    pub(crate) type Rayon = rayon::ThreadPool;

    pub(super) fn build(threads: usize) -> Result<Rayon, WobbleError> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| WobbleError::ThreadPool {
                threads,
                detail: e.to_string(),
            })
    }

    pub(super) fn install(pool: &Rayon, f: &mut (dyn FnMut() + Send)) {
        pool.install(f)
    }

    pub(super) fn blocks(pool: &Rayon, blocks: usize, f: &(dyn Fn(usize) + Sync)) {
        pool.install(|| (0..blocks).into_par_iter().with_max_len(1).for_each(f))
    }

    pub(super) fn chunks_mut<T: Send>(
        pool: &Rayon,
        data: &mut [T],
        chunk: usize,
        f: &(dyn Fn(usize, &mut [T]) + Sync),
    ) {
        pool.install(|| {
            data.par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(b, d)| f(b, d))
        })
    }

    // Spelled out like the other closures of both backends, which an alias would hide.
    #[allow(clippy::type_complexity)]
    pub(super) fn chunks_mut2<A: Send, B: Send>(
        pool: &Rayon,
        a: &mut [A],
        b: &mut [B],
        chunk: usize,
        f: &(dyn Fn(usize, &mut [A], &mut [B]) + Sync),
    ) {
        pool.install(|| {
            a.par_chunks_mut(chunk)
                .zip(b.par_chunks_mut(chunk))
                .enumerate()
                .for_each(|(k, (da, db))| f(k, da, db))
        })
    }

    pub(super) fn map(
        pool: &Rayon,
        blocks: usize,
        out: &mut Vec<f64>,
        f: &(dyn Fn(usize) -> f64 + Sync),
    ) {
        pool.install(|| (0..blocks).into_par_iter().map(f).collect_into_vec(out))
    }
}

/// No threads without the `parallel` feature: a pool of more than one thread is refused, so the
/// pool type is uninhabited and every parallel branch unreachable.
#[cfg(not(feature = "parallel"))]
mod backend {
    use solver_core::WobbleError;

    /// No pool can exist.
    #[derive(Debug)]
    pub(crate) enum Rayon {}

    pub(super) fn build(threads: usize) -> Result<Rayon, WobbleError> {
        Err(WobbleError::ThreadPool {
            threads,
            detail: "this build has no threads: enable the `parallel` cargo feature".into(),
        })
    }

    pub(super) fn install(pool: &Rayon, _: &mut (dyn FnMut() + Send)) {
        match *pool {}
    }

    pub(super) fn blocks(pool: &Rayon, _: usize, _: &(dyn Fn(usize) + Sync)) {
        match *pool {}
    }

    pub(super) fn chunks_mut<T: Send>(
        pool: &Rayon,
        _: &mut [T],
        _: usize,
        _: &(dyn Fn(usize, &mut [T]) + Sync),
    ) {
        match *pool {}
    }

    // Spelled out like the other closures of both backends, which an alias would hide.
    #[allow(clippy::type_complexity)]
    pub(super) fn chunks_mut2<A: Send, B: Send>(
        pool: &Rayon,
        _: &mut [A],
        _: &mut [B],
        _: usize,
        _: &(dyn Fn(usize, &mut [A], &mut [B]) + Sync),
    ) {
        match *pool {}
    }

    pub(super) fn map(pool: &Rayon, _: usize, _: &mut Vec<f64>, _: &(dyn Fn(usize) -> f64 + Sync)) {
        match *pool {}
    }
}
