//! A solve's iterations as one task graph: each task runs as soon as the tasks it overlaps have
//! run, with no barrier between iterations.
//!
//! The tasks are the colored solver's tiles and seam tiles (see [`crate::colored`]), once per
//! iteration. Task `X` of iteration `k` waits for
//! - the tasks of iteration `k` that must precede it in the schedule and touch its particles
//!   (a seam tile waits for the two tiles it overlaps), and
//! - in iteration `k - 1`, itself and every task that touches its particles.
//!
//! Tasks that run at the same time therefore touch disjoint particles and multipliers, and every
//! pair of tasks that share a particle runs in the order of the iteration-by-iteration schedule:
//! the result is that schedule's, bit for bit, on any number of threads.
//!
//! What it saves is the barrier at the end of every iteration: the thread that finishes first
//! no longer waits for the other's last tile and then for its own wake-up (rayon puts an idle
//! thread to sleep within microseconds). `docs/performance-notes.md` says how to measure it.
//!
//! A thread takes a finished task's first released successor next, so it runs down a diagonal
//! (tile `t` of iteration `k`, then tile `t - 1` of iteration `k + 1`, ...) over data it has just
//! touched; with tiles small enough for several to stay in L2 that reuse pays on one thread too.

use crate::parallel::Pool;
use std::sync::atomic::{AtomicU32, Ordering};

/// The dependencies between the tasks of one iteration and of consecutive iterations.
#[derive(Debug, Default)]
pub(crate) struct Wavefront {
    /// Per task: the tasks of the same iteration that wait for it.
    feeds_same: Vec<Vec<u32>>,
    /// Per task: the tasks of the next iteration that wait for it.
    feeds_next: Vec<Vec<u32>>,
    /// Per task: how many tasks of its own iteration it waits for.
    waits_same: Vec<u32>,
    /// Per task: how many tasks of the previous iteration it waits for.
    waits_prev: Vec<u32>,
    /// Per (iteration, task) during a solve: tasks still to wait for.
    pending: Vec<AtomicU32>,
    /// `run_serial`'s stack of ready (iteration, task), kept to spare an allocation per solve.
    ready: Vec<(usize, usize)>,
}

impl Wavefront {
    /// The graph of `tasks` tasks: `before[x]` lists the tasks of the same iteration that must
    /// run before task `x`, `overlaps[x]` every task whose particles meet `x`'s (not `x`).
    pub(crate) fn new(tasks: usize, before: &[Vec<u32>], overlaps: &[Vec<u32>]) -> Self {
        let mut feeds_same = vec![Vec::new(); tasks];
        let mut feeds_next = vec![Vec::new(); tasks];
        let mut waits_same = vec![0; tasks];
        let mut waits_prev = vec![0; tasks];
        for x in 0..tasks {
            for &y in &before[x] {
                feeds_same[y as usize].push(x as u32);
                waits_same[x] += 1;
            }
            for y in std::iter::once(x as u32).chain(overlaps[x].iter().copied()) {
                feeds_next[y as usize].push(x as u32);
                waits_prev[x] += 1;
            }
        }
        Wavefront {
            feeds_same,
            feeds_next,
            waits_same,
            waits_prev,
            pending: Vec::new(),
            ready: Vec::new(),
        }
    }

    /// Number of tasks per iteration.
    pub(crate) fn tasks(&self) -> usize {
        self.waits_same.len()
    }

    /// Runs `run(iteration, task)` for every task of `iterations` iterations, each as soon as
    /// what it waits for has run: on `pool`'s threads, or on this one when the pool has none or
    /// `parallel` is false.
    pub(crate) fn run(
        &mut self,
        pool: &Pool,
        parallel: bool,
        iterations: usize,
        run: &(dyn Fn(usize, usize) + Sync),
    ) {
        if iterations == 0 {
            return;
        }
        let n = self.tasks();
        self.pending
            .resize_with(n * iterations, || AtomicU32::new(0));
        for k in 0..iterations {
            for x in 0..n {
                let w = self.waits_same[x] + if k > 0 { self.waits_prev[x] } else { 0 };
                self.pending[k * n + x].store(w, Ordering::Relaxed);
            }
        }
        match pool.rayon().filter(|_| parallel) {
            Some(rayon) => self.run_parallel(rayon, iterations, run),
            None => self.run_serial(iterations, run),
        }
    }

    /// [`Wavefront::run`] on this thread, in the order one worker of `run_parallel` takes:
    /// depth first, a task's first released successor next.
    fn run_serial(&mut self, iterations: usize, run: &(dyn Fn(usize, usize) + Sync)) {
        let n = self.tasks();
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(
            (0..n)
                .rev()
                .filter(|&x| self.waits_same[x] == 0)
                .map(|x| (0, x)),
        );
        while let Some((k, x)) = ready.pop() {
            run(k, x);
            let mark = ready.len();
            let mut release = |k: usize, y: u32| {
                let p = &self.pending[k * n + y as usize];
                let left = p.load(Ordering::Relaxed) - 1;
                p.store(left, Ordering::Relaxed);
                if left == 0 {
                    ready.push((k, y as usize));
                }
            };
            self.feeds_same[x].iter().for_each(|&y| release(k, y));
            if k + 1 < iterations {
                self.feeds_next[x].iter().for_each(|&y| release(k + 1, y));
            }
            // The first released on top: it runs next.
            ready[mark..].reverse();
        }
        self.ready = ready;
    }

    /// No threads in this build: a pool of one thread never reaches here.
    #[cfg(not(feature = "parallel"))]
    fn run_parallel(
        &self,
        rayon: &crate::parallel::Rayon,
        _: usize,
        _: &(dyn Fn(usize, usize) + Sync),
    ) {
        match *rayon {}
    }

    /// [`Wavefront::run`] on the pool's threads.
    #[cfg(feature = "parallel")]
    fn run_parallel(
        &self,
        rayon: &rayon::ThreadPool,
        iterations: usize,
        run: &(dyn Fn(usize, usize) + Sync),
    ) {
        let n = self.tasks();
        let this = self;
        let graph = Graph {
            wave: this,
            iterations,
            run,
        };
        rayon.scope(|sc| {
            for x in (0..n).filter(|&x| this.waits_same[x] == 0) {
                let graph = &graph;
                sc.spawn(move |sc| graph.task(sc, 0, x));
            }
        });
    }
}

/// One solve's view of the graph.
#[cfg(feature = "parallel")]
struct Graph<'a> {
    wave: &'a Wavefront,
    iterations: usize,
    run: &'a (dyn Fn(usize, usize) + Sync),
}

#[cfg(feature = "parallel")]
impl<'a> Graph<'a> {
    /// Runs task `x` of iteration `k`, then releases what waits for it: one ready task runs
    /// next on this thread (its data is likely in this core's cache), the others are spawned
    /// for any thread to take.
    fn task<'s>(&'s self, sc: &rayon::Scope<'s>, k: usize, x: usize)
    where
        'a: 's,
    {
        let (mut k, mut x) = (k, x);
        loop {
            (self.run)(k, x);
            let w = self.wave;
            let n = w.tasks();
            let mut next = None;
            let mut release = |k: usize, y: u32| {
                // Acquire-release: the writes of every task `y` waited for happen before it.
                if w.pending[k * n + y as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                    match next {
                        None => next = Some((k, y as usize)),
                        Some(_) => sc.spawn(move |sc| self.task(sc, k, y as usize)),
                    }
                }
            };
            for &y in &w.feeds_same[x] {
                release(k, y);
            }
            if k + 1 < self.iterations {
                for &y in &w.feeds_next[x] {
                    release(k + 1, y);
                }
            }
            match next {
                Some(t) => (k, x) = t,
                None => return,
            }
        }
    }
}
