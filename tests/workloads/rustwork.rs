// SPDX-License-Identifier: MIT
//! rustwork: known shares in a Rust release build (`rustc -O`, no crates, no frame pointers), for
//! tests/integration/test_binaries.sh. Each round main() calls work(), which calls three
//! #[inline(never)] functions with 5 : 3 : 2 units of loops that cost the same per iteration
//! (when built with their loops aligned, -C llvm-args=-align-loops=64: a loop that straddles a
//! 64-byte line costs more per iteration on the test machines):
//! engine::checksum 50 %, <engine::Mixer<u64> as engine::Stage>::run 30 %, engine::scramble 20 %
//! of the process's CPU. Units are calibrated to ~50 ms at start (as burn.c does). Each round
//! also fills a std HashMap (a few % of the time), whose growth runs std's hashbrown
//! reserve_rehash: a symbol with LLVM's ".llvm.<digits>" suffix in Rust 1.95's std.
//!
//! usage: rustwork SECONDS (default 10). Prints "ready PID" once started.
use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

mod engine {
    pub trait Stage {
        fn run(&self, n: u64, x: u64) -> u64;
    }

    pub struct Mixer<T> {
        pub k: T,
    }

    #[inline(never)]
    pub fn checksum(n: u64, seed: u64) -> u64 {
        let mut x = seed;
        for _ in 0..n {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
        }
        x
    }

    impl Stage for Mixer<u64> {
        #[inline(never)]
        fn run(&self, n: u64, seed: u64) -> u64 {
            let mut x = seed;
            for _ in 0..n {
                x = std::hint::black_box(x.wrapping_mul(2862933555777941757).wrapping_add(self.k));
            }
            x
        }
    }

    #[inline(never)]
    pub fn scramble(n: u64, seed: u64) -> u64 {
        let mut x = seed;
        for _ in 0..n {
            x = std::hint::black_box(x.wrapping_mul(3935559000370003845).wrapping_add(2691343689449507681));
        }
        x
    }
}

use engine::Stage;

#[inline(never)]
fn fill(n: u64) -> u64 {
    let mut h = HashMap::new(); // no capacity: it grows, and rehashes
    for i in 0..n {
        h.insert(i, i ^ 0x5555);
    }
    black_box(h.len() as u64)
}

#[inline(never)]
fn work(unit: u64, seed: u64, m: &engine::Mixer<u64>) -> u64 {
    let h = fill(unit / 50);
    let a = engine::checksum(5 * unit, seed ^ h);
    let b = m.run(3 * unit, a);
    let c = engine::scramble(2 * unit, b);
    black_box(c) ^ 1 // not a tail call: work stays under scramble
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let m = engine::Mixer { k: black_box(3037000493u64) };
    let t0 = Instant::now();
    let mut n = 0u64;
    let mut x = 1u64;
    while t0.elapsed().as_secs_f64() < 0.02 {
        x = engine::checksum(100000, x);
        n += 100000;
    }
    let unit = std::cmp::max(1000, (n as f64 / t0.elapsed().as_secs_f64() * 0.050) as u64);
    println!("ready {}", std::process::id());
    let end = Instant::now();
    while end.elapsed().as_secs_f64() < secs {
        x = work(unit, x, &m);
    }
    println!("{}", x & 1);
}
