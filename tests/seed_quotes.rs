//! The claims quote their seed texts word for word: each quote of `harness::claims::sources`
//! is found in the text it names. The seeds live beside the checkout (`../shared/seeds/`), not
//! in it; a checkout without them says so and checks nothing.

use harness::claims::sources::{C1, C12, C2, C3, C4, C5, C6, C7};

#[test]
fn seed_quotes_are_word_for_word() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/seeds/");
    let godot = std::fs::read_to_string(format!("{root}000_0f9a7952f13f0509.txt"));
    let unity = std::fs::read_to_string(format!("{root}002_c1bd6b24f1d9d2b5.txt"));
    let (Ok(godot), Ok(unity)) = (godot, unity) else {
        println!("skipped: no seed texts at {root}");
        return;
    };
    for s in [C1, C2, C3, C4, C5, C6[0]] {
        assert!(godot.contains(s.original), "{}", s.original);
    }
    for s in [C6[1], C7[0], C7[1], C12] {
        assert!(unity.contains(s.original), "{}", s.original);
    }
}
