//! One measured count as the forecasts take it: its time per unit of work and that of each run.

/// One measured count: its time per unit of work (1 / rate) and that of each run.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The count.
    pub count: f64,
    /// 1 / the point's rate.
    pub time: f64,
    /// 1 / each run's rate (one value for a published table).
    pub runs: Vec<f64>,
}

/// The point that did the most per core: perfect scaling from it bounds every forecast.
pub fn most_per_core(pts: &[Point]) -> Option<&Point> {
    pts.iter().min_by(|x, y| (x.time * x.count).total_cmp(&(y.time * y.count)))
}
