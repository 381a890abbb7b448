//! Workers that contend on a `std::sync::Mutex`, for the stack tests: `histogram N S` runs N
//! workers that fill a shared histogram for S seconds, each update under the lock in
//! `update_histogram`. Rust's standard library is built with frame pointers: a blocked thread's
//! stack unwinds past `Mutex::lock_contended` only when its frame pointer is found.

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[inline(never)]
fn update_histogram(bins: &Mutex<Vec<u64>>, v: u64) {
    let mut b = bins.lock().unwrap();
    for k in 0..200_000u64 {
        let i = ((v + k) % 64) as usize;
        b[i] = black_box(b[i] + 1);
    }
}

#[inline(never)]
fn worker(bins: Arc<Mutex<Vec<u64>>>, until: Instant) {
    let mut v = 0;
    while Instant::now() < until {
        update_histogram(&bins, v);
        v += 1;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (n, s): (usize, f64) = (args[1].parse().unwrap(), args[2].parse().unwrap());
    let until = Instant::now() + Duration::from_secs_f64(s);
    let bins = Arc::new(Mutex::new(vec![0u64; 64]));
    let workers: Vec<_> = (0..n)
        .map(|_| {
            let b = bins.clone();
            std::thread::spawn(move || worker(b, until))
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    println!("{}", bins.lock().unwrap().iter().sum::<u64>());
}
