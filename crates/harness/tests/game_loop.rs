//! The game-loop measurements in process, on tiny sizes: `wobble hitch` (the frame of a grab
//! against its neighbours) and `wobble threads --bodies` (bodies sharing one pool).

use harness::commands::hitch::{measure as hitch, HitchArgs};
use harness::commands::threads::{measure as threads, ThreadsArgs};
use harness::setup::{KernelArg, Layout, OrderingArg, SceneArg, SolverArg};

fn hitch_args(renew_topology: bool) -> HitchArgs {
    HitchArgs {
        scene: SceneArg::Cloth,
        n: 8,
        solver: SolverArg::Colored,
        threads: 1,
        kernel: KernelArg::Auto,
        iterations: 4,
        period: 4,
        events: 6,
        neighbours: 2,
        renew_topology,
        json: true,
    }
}

#[test]
fn grabs_and_releases_keep_the_topology_unless_asked() {
    let plain = hitch(&hitch_args(false)).unwrap();
    assert_eq!(plain.topology_changes, 0);
    assert_eq!(plain.grab_ratio.samples, 3);
    assert_eq!(plain.release_ratio.samples, 3);
    for r in [plain.grab_ratio, plain.release_ratio] {
        assert!(r.lo > 0.0 && r.lo <= r.median && r.median <= r.hi, "{r:?}");
    }
    assert_eq!(hitch(&hitch_args(true)).unwrap().topology_changes, 6);
    let bad = HitchArgs {
        period: 2,
        ..hitch_args(false)
    };
    assert!(hitch(&bad).is_err());
}

#[test]
#[cfg_attr(
    not(feature = "parallel"),
    ignore = "needs the `parallel` feature (threads)"
)]
fn bodies_sharing_a_pool_give_the_same_bits_on_every_thread_count() {
    let args = ThreadsArgs {
        scene: SceneArg::Cloth,
        n: 12,
        solver: SolverArg::Colored,
        iterations: 4,
        threads: "1,2".into(),
        layout: Layout {
            ordering: OrderingArg::Natural,
            tile: sparse::colored::DEFAULT_TILE_PARTICLES,
            kernel: KernelArg::Auto,
        },
        bodies: 3,
        across_bodies: false,
        parallel_threshold: 1,
        warmup: 1,
        steps: 4,
        turn: 2,
        json: true,
    };
    let r = threads(&args).unwrap();
    assert_eq!((r.bodies, r.parallel_threshold), (3, 1));
    assert!(r.same_bits);
    assert_eq!(r.counts.len(), 2);
    assert!(r.counts.iter().all(|c| c.ms_per_step_median > 0.0));
    let across = threads(&ThreadsArgs {
        across_bodies: true,
        ..args.clone()
    })
    .unwrap();
    assert!(across.same_bits && across.across_bodies);
    assert!(threads(&ThreadsArgs { bodies: 0, ..args }).is_err());
}
