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
