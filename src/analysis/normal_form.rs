//! The candidate models of a forecast, each linear in its coefficients: Extra-P's performance-model
//! normal form T(p) = c₀ + Σ cₖ·p^iₖ·log₂^jₖ(p) (one or two terms) on the time per unit of work,
//! with Amdahl (T = c₀ + c₁/p) and the USL (T = c₀ + c₁/p + c₂·p) as the members whose
//! coefficients keep their laws' meaning, and Gustafson as a straight line in the rate.
//! Every fit is weighted least squares on relative error, so a table of times and one of
//! throughputs give the same model.

use super::lm::solve_linear;

/// What the linear combination models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// Time per unit of work, 1 / rate.
    Time,
    /// The rate.
    Rate,
}

/// Which law a candidate stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// T = c₀ + c₁/p with c₀ ≥ 0, c₁ > 0.
    Amdahl,
    /// T = c₀ + c₁/p + c₂·p, σ ∈ [0, 1], κ ≥ 0.
    Usl,
    /// X = c₀ + c₁·p with both ≥ 0.
    Gustafson,
    /// Any other sum of terms, with no negative coefficient on a term.
    NormalForm,
}

/// One term p^(num/den) · log₂(p)^log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// Numerator of the power of p.
    pub num: i8,
    /// Denominator of the power of p.
    pub den: i8,
    /// Power of log₂(p).
    pub log: u8,
}

impl Term {
    const fn new(num: i8, den: i8, log: u8) -> Term {
        Term { num, den, log }
    }

    /// The term's value at `p`.
    pub fn at(&self, p: f64) -> f64 {
        p.powf(f64::from(self.num) / f64::from(self.den)) * p.log2().powi(i32::from(self.log))
    }

    fn text(&self) -> String {
        let power = match (self.num, self.den) {
            (0, _) => String::new(),
            (1, 1) => "p".into(),
            (n, 1) => format!("p^{n}"),
            (n, d) => format!("p^{n}/{d}"),
        };
        let log = match self.log {
            0 => String::new(),
            1 => "log₂p".into(),
            2 => "log₂²p".into(),
            l => format!("log₂^{l}p"),
        };
        [power, log].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("·")
    }
}

/// The exponent set: powers −1, −½, 0, ½, 1, 2 of p, times log₂(p) to the power 0, 1 or 2.
pub const TERMS: [Term; 17] = [
    Term::new(-1, 1, 0),
    Term::new(-1, 1, 1),
    Term::new(-1, 1, 2),
    Term::new(-1, 2, 0),
    Term::new(-1, 2, 1),
    Term::new(-1, 2, 2),
    Term::new(0, 1, 1),
    Term::new(0, 1, 2),
    Term::new(1, 2, 0),
    Term::new(1, 2, 1),
    Term::new(1, 2, 2),
    Term::new(1, 1, 0),
    Term::new(1, 1, 1),
    Term::new(1, 1, 2),
    Term::new(2, 1, 0),
    Term::new(2, 1, 1),
    Term::new(2, 1, 2),
];

const INVERSE: Term = Term::new(-1, 1, 0);
const LINEAR: Term = Term::new(1, 1, 0);

/// A candidate: a constant plus its terms, in its space.
#[derive(Clone, Debug, PartialEq)]
pub struct Hypothesis {
    /// The law it stands for.
    pub family: Family,
    /// What it models.
    pub space: Space,
    /// Its terms, after the constant.
    pub terms: Vec<Term>,
}

impl Hypothesis {
    /// Coefficients: the constant and one per term.
    pub fn arity(&self) -> usize {
        self.terms.len() + 1
    }

    /// The modelled figure (time per unit, or rate) at `p`.
    pub fn raw(&self, c: &[f64], p: f64) -> f64 {
        c[0] + self.terms.iter().zip(&c[1..]).map(|(t, c)| c * t.at(p)).sum::<f64>()
    }

    /// The time per unit of work at `p`; `None` where the model is not positive.
    pub fn time(&self, c: &[f64], p: f64) -> Option<f64> {
        let v = self.raw(c, p);
        (v > 0.0 && v.is_finite()).then(|| if self.space == Space::Time { v } else { 1.0 / v })
    }

    /// Weighted least squares on relative error through `(p, time per unit)` points; `None` when
    /// singular or when the coefficients leave the law's meaning.
    pub fn fit(&self, pts: &[(f64, f64)]) -> Option<Vec<f64>> {
        let free: Vec<Vec<f64>> = (0..self.arity()).map(|i| unit(self.arity(), i)).collect();
        let c = self.fit_on(pts, &free)?;
        self.admissible(&c).then_some(c)
    }

    /// The fit held to the law's meaning: the free fit where it keeps it, or else the best fit on
    /// the boundary it crossed (a coefficient at zero; for the USL, σ at zero). How a left-out
    /// count is predicted: two counts whose step is faster than a law of costs can follow must
    /// not cost the candidate its score, or a constant alone survives the cross-validation of a
    /// table that scales.
    pub fn fit_within(&self, pts: &[(f64, f64)]) -> Option<Vec<f64>> {
        if let Some(c) = self.fit(pts) {
            return Some(c);
        }
        self.faces()
            .iter()
            .filter_map(|face| self.fit_on(pts, face))
            .filter(|c| self.admissible(c))
            .map(|c| (self.misfit(pts, &c), c))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, c)| c)
    }

    /// Weighted least squares over the directions `dirs` of the coefficients' space: the
    /// coefficients are Σ uⱼ·dirsⱼ, with the u fitted.
    fn fit_on(&self, pts: &[(f64, f64)], dirs: &[Vec<f64>]) -> Option<Vec<f64>> {
        let m = dirs.len();
        if m == 0 || pts.len() < m {
            return None;
        }
        let mut a = vec![vec![0.0; m]; m];
        let mut b = vec![0.0; m];
        let mut row = vec![0.0; m];
        for &(p, t) in pts {
            let y = self.observed(t);
            let f = self.basis(p);
            for (r, d) in row.iter_mut().zip(dirs) {
                *r = d.iter().zip(&f).map(|(d, f)| d * f).sum::<f64>() / y;
            }
            for i in 0..m {
                b[i] += row[i];
                for j in 0..m {
                    a[i][j] += row[i] * row[j];
                }
            }
        }
        let u = solve_linear(a, b)?;
        Some(
            (0..self.arity())
                .map(|i| dirs.iter().zip(&u).map(|(d, u)| d[i] * u).sum::<f64>())
                .collect(),
        )
    }

    /// The constant and each term at `p`.
    fn basis(&self, p: f64) -> Vec<f64> {
        std::iter::once(1.0).chain(self.terms.iter().map(|t| t.at(p))).collect()
    }

    /// The figure modelled from a time per unit.
    fn observed(&self, t: f64) -> f64 {
        if self.space == Space::Time { t } else { 1.0 / t }
    }

    /// The sum of squared relative errors the fit leaves.
    fn misfit(&self, pts: &[(f64, f64)], c: &[f64]) -> f64 {
        pts.iter().map(|&(p, t)| (self.raw(c, p) / self.observed(t) - 1.0).powi(2)).sum()
    }

    /// The boundaries of the law's meaning, each as the directions left free on it, largest
    /// first: a term whose coefficient must be positive (Amdahl's, Gustafson's and the USL's
    /// work that divides) is never dropped, as the law would then be another.
    fn faces(&self) -> Vec<Vec<Vec<f64>>> {
        let k = self.arity();
        let e = |i| unit(k, i);
        match self.family {
            Family::Amdahl | Family::Gustafson => vec![vec![e(1)]],
            // c₂ = 0 (no coherency), or c₀ = −c₂ (σ = 0), or both.
            Family::Usl => {
                let sigma_zero: Vec<f64> = e(2).iter().zip(e(0)).map(|(a, b)| a - b).collect();
                vec![vec![e(0), e(1)], vec![e(1), sigma_zero], vec![e(1)]]
            }
            Family::NormalForm => (1..1usize << self.terms.len())
                .rev()
                .skip(1)
                .chain(std::iter::once(0))
                .map(|kept| {
                    std::iter::once(e(0))
                        .chain(
                            (0..self.terms.len()).filter(|t| kept >> t & 1 == 1).map(|t| e(t + 1)),
                        )
                        .collect()
                })
                .collect(),
        }
    }

    fn admissible(&self, c: &[f64]) -> bool {
        match self.family {
            Family::Amdahl => c[0] >= 0.0 && c[1] > 0.0,
            // T = α/p + β + δp: γ = 1/(α+β+δ), σ = (β+δ)γ, κ = δγ.
            Family::Usl => c[1] > 0.0 && c[2] >= 0.0 && c[0] + c[2] >= 0.0,
            Family::Gustafson => c[0] >= 0.0 && c[1] > 0.0,
            // Each term is a cost (work the workers divide, or an overhead they add): none is
            // negative, or two terms of opposite signs cancel where measured and part beyond.
            Family::NormalForm => c[1..].iter().all(|c| *c >= 0.0),
        }
    }

    /// The model as a formula: `T = 0.12 + 3.4·p^-1`, or `X = …` for a rate.
    pub fn formula(&self, c: &[f64]) -> String {
        let name = match self.family {
            Family::Amdahl => "Amdahl: ",
            Family::Usl => "USL: ",
            Family::Gustafson => "Gustafson: ",
            Family::NormalForm => "",
        };
        let lhs = if self.space == Space::Time { "T" } else { "X" };
        let mut s = format!("{name}{lhs} = {}", coef(c[0]));
        for (t, c) in self.terms.iter().zip(&c[1..]) {
            let sign = if *c < 0.0 { " − " } else { " + " };
            s.push_str(&format!("{sign}{}·{}", coef(c.abs()), t.text()));
        }
        s
    }
}

/// The `i`-th unit vector of `k` coefficients.
fn unit(k: usize, i: usize) -> Vec<f64> {
    (0..k).map(|j| f64::from(u8::from(j == i))).collect()
}

fn coef(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e5) {
        format!("{x:.3e}")
    } else {
        format!("{x:.4}")
    }
}

/// Every candidate: Amdahl, the USL, Gustafson, and the normal form with no term (a constant: the
/// count changes nothing), one or two.
pub fn candidates() -> Vec<Hypothesis> {
    let time = |family, terms: Vec<Term>| Hypothesis { family, space: Space::Time, terms };
    let mut v = vec![
        time(Family::Amdahl, vec![INVERSE]),
        time(Family::NormalForm, Vec::new()),
        time(Family::Usl, vec![INVERSE, LINEAR]),
        Hypothesis { family: Family::Gustafson, space: Space::Rate, terms: vec![LINEAR] },
    ];
    for (i, a) in TERMS.iter().enumerate() {
        if *a != INVERSE {
            v.push(time(Family::NormalForm, vec![*a]));
        }
        for b in &TERMS[i + 1..] {
            if !(*a == INVERSE && *b == LINEAR) {
                v.push(time(Family::NormalForm, vec![*a, *b]));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amdahl_in_time_recovers_its_serial_fraction() {
        // X = 10p / (1 + 0.05(p − 1)) ⇔ T = (0.95/p + 0.05) / 10.
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&p| (p, (1.0 + 0.05 * (p - 1.0)) / (10.0 * p)))
            .collect();
        let h = &candidates()[0];
        let c = h.fit(&pts).unwrap();
        assert!((c[0] - 0.005).abs() < 1e-12 && (c[1] - 0.095).abs() < 1e-12, "{c:?}");
        assert!((h.time(&c, 64.0).unwrap() - (1.0 + 0.05 * 63.0) / 640.0).abs() < 1e-12);
    }

    #[test]
    fn a_fit_held_to_its_law_lands_on_the_boundary_it_crossed() {
        // A step faster than perfect scaling: Amdahl's free fit needs c₀ < 0, so the held fit
        // has no serial part and the least relative error (c₁ between 0.9 and 1).
        let superlinear = [(1.0, 1.0), (2.0, 0.45)];
        let amdahl = &candidates()[0];
        assert_eq!(amdahl.fit(&superlinear), None);
        let c = amdahl.fit_within(&superlinear).unwrap();
        assert!(c[0] == 0.0 && c[1] > 0.9 && c[1] < 1.0, "{c:?}");
        // A two-term form whose free fit makes one term negative keeps the other.
        let h = Hypothesis {
            family: Family::NormalForm,
            space: Space::Time,
            terms: vec![TERMS[0], TERMS[3]],
        };
        let law = |p: f64| 0.3 + 1.0 / p - 0.3 / p.sqrt();
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0].iter().map(|&p| (p, law(p))).collect();
        assert_eq!(h.fit(&pts), None);
        let c = h.fit_within(&pts).unwrap();
        assert!(c[2] == 0.0 && c[1] > 0.0, "{c:?}");
        // A free fit within the law is the held fit.
        let law: Vec<(f64, f64)> = [1.0, 2.0, 4.0].iter().map(|&p| (p, 0.1 + 0.9 / p)).collect();
        assert_eq!(amdahl.fit_within(&law), amdahl.fit(&law));
    }

    #[test]
    fn a_superlinear_table_is_no_amdahl_and_laws_keep_their_meaning() {
        // Faster than linear: T = 1/p² is no Amdahl (c₀ < 0 would be needed).
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0].iter().map(|&p| (p, 1.0 / (p * p))).collect();
        assert_eq!(candidates()[0].fit(&pts), None);
        let gus = &candidates()[3];
        let c = gus.fit(&[(1.0, 1.0), (2.0, 0.5), (4.0, 0.25)]).unwrap();
        assert!((gus.time(&c, 8.0).unwrap() - 0.125).abs() < 1e-12, "{c:?}");
    }

    #[test]
    fn no_term_may_be_negative() {
        // T = 10/p − 0.01·p·log₂p falls faster than the work divides, without end.
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&p: &f64| (p, 10.0 / p - 0.01 * p * p.log2()))
            .collect();
        let shape = |log| Hypothesis {
            family: Family::NormalForm,
            space: Space::Time,
            terms: vec![Term::new(-1, 1, 0), Term::new(1, 1, log)],
        };
        assert_eq!(shape(1).fit(&pts), None);
        assert!(shape(0).fit(&pts).is_none_or(|c| c[2] >= 0.0));
        // Nor a falling one: T = 9 − 7·log₂²p/p + 3·log₂²p/√p, two terms that cancel where
        // measured, part beyond.
        let cancel: Vec<(f64, f64)> = [2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .map(|&p: &f64| {
                (p, 9.0 - 7.0 * p.log2().powi(2) / p + 3.0 * p.log2().powi(2) / p.sqrt())
            })
            .collect();
        let h = Hypothesis {
            family: Family::NormalForm,
            space: Space::Time,
            terms: vec![Term::new(-1, 1, 2), Term::new(-1, 2, 2)],
        };
        assert_eq!(h.fit(&cancel), None);
    }

    #[test]
    fn candidates_are_distinct_and_read_as_formulas() {
        let v = candidates();
        assert_eq!(v.len(), 4 + 16 + 17 * 16 / 2 - 1);
        for (i, a) in v.iter().enumerate() {
            assert!(v[i + 1..].iter().all(|b| b != a), "{a:?} twice");
        }
        let h = Hypothesis {
            family: Family::NormalForm,
            space: Space::Time,
            terms: vec![TERMS[1], TERMS[8]],
        };
        assert_eq!(h.formula(&[1.0, 2.5, -0.5]), "T = 1.0000 + 2.5000·p^-1·log₂p − 0.5000·p^1/2");
    }
}
