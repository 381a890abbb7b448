//! From a law's fit to the typed figures results.json stores: Amdahl's serial fraction, "as if X%
//! parallel" and ceiling; the USL's σ, κ, peak and which term limits; Gustafson's serial fraction.

use super::lm::Model;
use super::models::{Fitted, GAMMA, KAPPA, Law, S, SIGMA, usl_peak};
use crate::results::analysis::{AmdahlFit, GustafsonFit, UslFit, UslLimit};

/// Amdahl's figures from its fit.
pub fn amdahl(m: &Fitted) -> AmdahlFit {
    AmdahlFit {
        gamma: m.estimate(GAMMA),
        serial_fraction: m.estimate(S),
        parallel_pct: m.derived(|t| Some(100.0 * (1.0 - t[S]))).expect("defined for every s"),
        ceiling_speedup: m.derived(|t| (t[S] > 0.0).then(|| 1.0 / t[S])),
        fit: m.fit.clone(),
    }
}

/// The USL's figures from its fit; `largest` is the largest count fitted.
pub fn usl(m: &Fitted, largest: f64) -> UslFit {
    let (sigma, kappa) = (m.estimate(SIGMA), m.estimate(KAPPA));
    let contention = sigma.value * (largest - 1.0);
    let coherency = kappa.value * largest * (largest - 1.0);
    UslFit {
        gamma: m.estimate(GAMMA),
        sigma,
        kappa,
        peak_count: m.derived(usl_peak),
        peak_rate: m.derived(|t| usl_peak(t).map(|n| Law::Usl.value(n, t))),
        limited_by: if coherency > contention { UslLimit::Coherency } else { UslLimit::Contention },
        fit: m.fit.clone(),
    }
}

/// Gustafson's figures from its fit.
pub fn gustafson(m: &Fitted) -> GustafsonFit {
    GustafsonFit { gamma: m.estimate(GAMMA), serial_fraction: m.estimate(S), fit: m.fit.clone() }
}
