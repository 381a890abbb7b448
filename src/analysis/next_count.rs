//! Where to measure next, in the spirit of Extra-P's guided choice of measurement points: each
//! count between the largest measured and the target is added as if it measured what the model
//! predicts there, the whole procedure is run again, and the interval at the target it would
//! leave is weighed against what a run there costs in core-seconds.

use super::crossval::Chooser;
use super::forecast::forecast;
use super::point::Point;
use crate::stats::Rng;

/// A count worth measuring and what it would buy.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The count.
    pub count: f64,
    /// Width of the 90% interval at the target it would leave, as a share of the prediction.
    pub width: f64,
    /// Predicted time per unit of work there (× count: the core-seconds of a unit of work).
    pub time: f64,
}

/// Counts between the largest measured and `target`: doublings of the largest, and the target.
fn candidates(largest: f64, target: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut c = 2.0 * largest;
    while c < target {
        v.push(c);
        c *= 2.0;
    }
    v.push(target);
    v
}

/// The interval's width at `target` as a share of the prediction, when there is one.
pub fn width(chooser: &Chooser, pts: &[Point], target: f64, rng: &mut Rng) -> Option<f64> {
    let f = forecast(chooser, pts, &[target], rng)?;
    let o = &f.outlooks[0];
    o.interval.map(|[lo, hi]| (hi - lo) / o.time)
}

/// Each candidate count, smallest first, with the width it would leave at `target`.
pub fn options(chooser: &Chooser, pts: &[Point], target: f64, rng: &mut Rng) -> Vec<Candidate> {
    let Some(largest) = pts.last().map(|p| p.count).filter(|&l| target > l) else {
        return Vec::new();
    };
    let at = candidates(largest, target);
    let measured: Vec<(f64, f64)> = pts.iter().map(|p| (p.count, p.time)).collect();
    let Some(choice) = chooser.choose(&measured, &at) else { return Vec::new() };
    at.into_iter()
        .filter_map(|count| {
            let time = choice.best.time(count)?;
            let mut more = pts.to_vec();
            more.push(Point { count, time, runs: vec![time] });
            Some(Candidate { count, width: width(chooser, &more, target, rng)?, time })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measuring_nearer_the_target_narrows_its_interval_most() {
        let mut rng = Rng::new(5);
        let pts: Vec<Point> = [(1.0, 1.0), (2.0, 0.52), (4.0, 0.29), (8.0, 0.16), (16.0, 0.11)]
            .iter()
            .map(|&(count, time)| Point { count, time, runs: vec![time] })
            .collect();
        let now = width(&Chooser::default(), &pts, 128.0, &mut rng).unwrap();
        let opts = options(&Chooser::default(), &pts, 128.0, &mut rng);
        assert_eq!(opts.iter().map(|o| o.count).collect::<Vec<_>>(), [32.0, 64.0, 128.0]);
        // More counts also admit more models into the bootstrap: 32 threads alone buys little.
        assert!(opts[1].width < now && opts[2].width < now / 10.0, "{now} {opts:?}");
    }
}
