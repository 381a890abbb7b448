//! Choosing a model by leave-one-out cross-validation, as Extra-P does: each candidate is fitted
//! without one count and predicts it; the candidate whose predictions of the counts it did not
//! see erred least (root mean square of the log error, so time and throughput agree) is chosen.
//! A left-out fit is held to the candidate's meaning rather than failing it: two counts whose
//! step is faster than perfect scaling leave no law of costs a free fit through them.

use super::normal_form::{Family, Hypothesis, candidates};

/// A candidate fitted to every point, with its cross-validated error.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    /// The candidate.
    pub hypothesis: Hypothesis,
    /// Its coefficients fitted to every point.
    pub coefs: Vec<f64>,
    /// Root mean square of ln(predicted / measured) over the left-out counts; `None` when too
    /// few counts to leave one out (the only candidate then is Amdahl through two counts).
    pub cv_error: Option<f64>,
    /// ln(predicted / measured) at each count, left out.
    pub loo: Vec<f64>,
}

impl Scored {
    /// The time per unit of work it predicts at `p`.
    pub fn time(&self, p: f64) -> Option<f64> {
        self.hypothesis.time(&self.coefs, p)
    }
}

/// The chosen candidate and the runner-up.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Lowest cross-validated error.
    pub best: Scored,
    /// Next lowest, when there is one.
    pub runner_up: Option<Scored>,
}

/// The candidates, built once.
pub struct Chooser {
    hypotheses: Vec<Hypothesis>,
}

impl Default for Chooser {
    fn default() -> Self {
        Chooser { hypotheses: candidates() }
    }
}

impl Chooser {
    /// Chooses among the candidates for `(count, time per unit)` points with distinct counts,
    /// predicting positive times at every count in `at`; `None` with fewer than two points.
    pub fn choose(&self, pts: &[(f64, f64)], at: &[f64]) -> Option<Choice> {
        if pts.len() == 2 {
            let h = self.hypotheses.iter().find(|h| h.family == Family::Amdahl)?;
            let coefs = h.fit(pts)?;
            let best = Scored { hypothesis: h.clone(), coefs, cv_error: None, loo: Vec::new() };
            return at
                .iter()
                .all(|&p| best.time(p).is_some())
                .then_some(Choice { best, runner_up: None });
        }
        let mut scored: Vec<Scored> = self
            .hypotheses
            .iter()
            .filter(|h| h.arity() <= most_coefficients(pts.len()))
            .filter_map(|h| score(h, pts, at))
            .collect();
        scored.sort_by(|a, b| {
            a.cv_error.unwrap_or(f64::INFINITY).total_cmp(&b.cv_error.unwrap_or(f64::INFINITY))
        });
        let mut it = scored.into_iter();
        let best = it.next()?;
        Some(Choice { best, runner_up: it.next() })
    }
}

/// Coefficients a candidate may have with `n` counts: two, or as many as leave each left-out fit
/// a degree of freedom (a fit through as many counts as coefficients tells nothing of the noise).
fn most_coefficients(n: usize) -> usize {
    n.saturating_sub(2).max(2)
}

fn score(h: &Hypothesis, pts: &[(f64, f64)], at: &[f64]) -> Option<Scored> {
    let coefs = h.fit(pts)?;
    if pts.iter().map(|p| p.0).chain(at.iter().copied()).any(|p| h.time(&coefs, p).is_none()) {
        return None;
    }
    let mut loo = Vec::with_capacity(pts.len());
    let mut rest = Vec::with_capacity(pts.len() - 1);
    for (i, &(p, t)) in pts.iter().enumerate() {
        rest.clear();
        rest.extend(pts.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, q)| *q));
        let c = h.fit_within(&rest)?;
        loo.push((h.time(&c, p)? / t).ln());
    }
    let cv = (loo.iter().map(|e| e * e).sum::<f64>() / loo.len() as f64).sqrt();
    Some(Scored { hypothesis: h.clone(), coefs, cv_error: Some(cv), loo })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(f: impl Fn(f64) -> f64, counts: &[f64]) -> Vec<(f64, f64)> {
        counts.iter().map(|&p| (p, f(p))).collect()
    }

    #[test]
    fn an_amdahl_table_chooses_a_model_that_extrapolates_it() {
        let law = |p: f64| 0.02 + 0.98 / p;
        let pts = times(law, &[1.0, 2.0, 4.0, 8.0, 16.0]);
        let c = Chooser::default().choose(&pts, &[64.0]).unwrap();
        let got = c.best.time(64.0).unwrap();
        assert!(
            (got / law(64.0) - 1.0).abs() < 1e-6,
            "{} predicts {got}",
            c.best.hypothesis.formula(&c.best.coefs)
        );
        assert!(c.best.cv_error.unwrap() < 1e-9 && c.runner_up.is_some());
    }

    #[test]
    fn a_usl_table_with_a_peak_is_told_from_amdahl() {
        // X = p / (1 + 0.05(p − 1) + 0.002p(p − 1)): a peak near 22.
        let law = |p: f64| (1.0 + 0.05 * (p - 1.0) + 0.002 * p * (p - 1.0)) / p;
        let pts = times(law, &[1.0, 2.0, 4.0, 8.0, 12.0, 16.0]);
        let c = Chooser::default().choose(&pts, &[48.0]).unwrap();
        assert!((c.best.time(48.0).unwrap() / law(48.0) - 1.0).abs() < 0.01);
        assert!(c.best.cv_error.unwrap() < 1e-6);
    }

    #[test]
    fn a_superlinear_first_step_does_not_leave_the_constant_alone_in_the_running() {
        // CASTEP on ARCHER, 1–4 nodes (time per SCF cycle): 2 nodes ran 2.09× as fast as 1.
        // Every left-out fit through 1 and 2 nodes needs a negative serial part; failing them
        // had left only `T = c` to choose, which predicted 8 nodes slower than 4.
        let pts = [(1.0, 184.2), (2.0, 88.18), (4.0, 51.33)];
        let c = Chooser::default().choose(&pts, &[8.0, 16.0]).unwrap();
        assert!(
            !c.best.hypothesis.terms.is_empty(),
            "{}",
            c.best.hypothesis.formula(&c.best.coefs)
        );
        assert!(c.best.time(8.0).unwrap() < 51.33, "{}", c.best.hypothesis.formula(&c.best.coefs));
    }

    #[test]
    fn two_counts_give_amdahl_without_a_score_and_one_gives_nothing() {
        let c = Chooser::default().choose(&[(1.0, 1.0), (2.0, 0.6)], &[4.0]).unwrap();
        assert_eq!(c.best.hypothesis.family, Family::Amdahl);
        assert_eq!(c.best.cv_error, None);
        assert_eq!(Chooser::default().choose(&[(1.0, 1.0)], &[4.0]), None);
    }
}
