//! A small bounded Levenberg–Marquardt least-squares solver for models with a handful of
//! parameters (Amdahl, USL, Gustafson), with Marquardt's diagonal scaling so that parameters of
//! very different magnitudes (κ ≈ 1e-4 beside γ ≈ 100) converge alike.

/// A model: its value and gradient (∂f/∂θ) at `x` for parameters `theta`.
pub trait Model {
    /// Number of parameters.
    fn arity(&self) -> usize;
    /// f(x; θ).
    fn value(&self, x: f64, theta: &[f64]) -> f64;
    /// ∂f/∂θ at x, written into `grad`.
    fn gradient(&self, x: f64, theta: &[f64], grad: &mut [f64]);
    /// Lower and upper bound of each parameter.
    fn bounds(&self) -> Vec<(f64, f64)>;
}

/// A least-squares solution.
#[derive(Clone, Debug)]
pub struct Fit {
    /// Parameters at the minimum.
    pub theta: Vec<f64>,
    /// Sum of squared residuals.
    pub rss: f64,
    /// Asymptotic covariance of the parameters: s²(JᵀJ)⁻¹ with s² = RSS/(n−p); `None` when singular
    /// or when there are no degrees of freedom.
    pub covariance: Option<Vec<Vec<f64>>>,
}

fn rss(model: &dyn Model, xs: &[f64], ys: &[f64], theta: &[f64]) -> f64 {
    xs.iter().zip(ys).map(|(&x, &y)| (y - model.value(x, theta)).powi(2)).sum()
}

/// Minimises Σ(y − f(x))² from `start`, keeping parameters within their bounds.
pub fn solve(model: &dyn Model, xs: &[f64], ys: &[f64], start: &[f64]) -> Fit {
    let p = model.arity();
    let bounds = model.bounds();
    let clamp = |t: &mut [f64]| {
        for (v, (lo, hi)) in t.iter_mut().zip(&bounds) {
            *v = v.clamp(*lo, *hi);
        }
    };
    let mut theta = start.to_vec();
    clamp(&mut theta);
    let mut cost = rss(model, xs, ys, &theta);
    let mut lambda = 1e-3;
    let mut grad = vec![0.0; p];
    for _ in 0..500 {
        let (jtj, jtr) = normal_equations(model, xs, ys, &theta, &mut grad);
        let mut improved = false;
        while lambda < 1e12 {
            let Some(step) = damped_step(&jtj, &jtr, lambda, &theta, &bounds) else {
                lambda *= 10.0;
                continue;
            };
            let mut trial: Vec<f64> = theta.iter().zip(&step).map(|(t, s)| t + s).collect();
            clamp(&mut trial);
            let c = rss(model, xs, ys, &trial);
            if c.is_finite() && c < cost {
                let rel = (cost - c) / cost.max(1e-300);
                theta = trial;
                cost = c;
                lambda = (lambda / 10.0).max(1e-12);
                improved = rel > 1e-18;
                break;
            }
            lambda *= 10.0;
        }
        if !improved {
            break;
        }
    }
    let covariance = covariance(model, xs, ys, &theta, cost, &mut grad);
    Fit { theta, rss: cost, covariance }
}

/// The damped Gauss–Newton step; parameters sitting on a bound that the step would push past are
/// held fixed (an active set), so the others can still move.
fn damped_step(
    jtj: &[Vec<f64>],
    jtr: &[f64],
    lambda: f64,
    theta: &[f64],
    bounds: &[(f64, f64)],
) -> Option<Vec<f64>> {
    let p = theta.len();
    let mut fixed = vec![false; p];
    loop {
        let mut a: Vec<Vec<f64>> = jtj.to_vec();
        let mut b = jtr.to_vec();
        for i in 0..p {
            a[i][i] += lambda * jtj[i][i].max(1e-30);
            if fixed[i] {
                a[i].iter_mut().for_each(|v| *v = 0.0);
                a.iter_mut().for_each(|row| row[i] = 0.0);
                a[i][i] = 1.0;
                b[i] = 0.0;
            }
        }
        let step = solve_linear(a, b)?;
        let mut changed = false;
        for i in 0..p {
            let (lo, hi) = bounds[i];
            let outward = (theta[i] <= lo && step[i] < 0.0) || (theta[i] >= hi && step[i] > 0.0);
            if outward && !fixed[i] {
                fixed[i] = true;
                changed = true;
            }
        }
        if !changed {
            return Some(step);
        }
    }
}

fn normal_equations(
    model: &dyn Model,
    xs: &[f64],
    ys: &[f64],
    theta: &[f64],
    grad: &mut [f64],
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let p = theta.len();
    let mut jtj = vec![vec![0.0; p]; p];
    let mut jtr = vec![0.0; p];
    for (&x, &y) in xs.iter().zip(ys) {
        model.gradient(x, theta, grad);
        let r = y - model.value(x, theta);
        for i in 0..p {
            jtr[i] += grad[i] * r;
            for j in 0..p {
                jtj[i][j] += grad[i] * grad[j];
            }
        }
    }
    (jtj, jtr)
}

fn covariance(
    model: &dyn Model,
    xs: &[f64],
    ys: &[f64],
    theta: &[f64],
    cost: f64,
    grad: &mut [f64],
) -> Option<Vec<Vec<f64>>> {
    let (n, p) = (xs.len(), theta.len());
    if n <= p {
        return None;
    }
    let (jtj, _) = normal_equations(model, xs, ys, theta, grad);
    let inv = invert(jtj)?;
    let s2 = cost / (n - p) as f64;
    Some(inv.into_iter().map(|row| row.into_iter().map(|v| v * s2).collect()).collect())
}

/// Solves A·x = b by Gaussian elimination with partial pivoting; `None` when singular.
pub fn solve_linear(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            let (upper, lower) = a.split_at_mut(row);
            for (dst, src) in lower[0][col..].iter_mut().zip(&upper[col][col..]) {
                *dst -= f * src;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

fn invert(a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut cols = Vec::with_capacity(n);
    for i in 0..n {
        let mut e = vec![0.0; n];
        e[i] = 1.0;
        cols.push(solve_linear(a.clone(), e)?);
    }
    Some((0..n).map(|r| (0..n).map(|c| cols[c][r]).collect()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Line;
    impl Model for Line {
        fn arity(&self) -> usize {
            2
        }
        fn value(&self, x: f64, t: &[f64]) -> f64 {
            t[0] + t[1] * x
        }
        fn gradient(&self, x: f64, _: &[f64], g: &mut [f64]) {
            g[0] = 1.0;
            g[1] = x;
        }
        fn bounds(&self) -> Vec<(f64, f64)> {
            vec![(f64::NEG_INFINITY, f64::INFINITY), (0.0, f64::INFINITY)]
        }
    }

    #[test]
    fn fits_a_line_and_its_standard_errors() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0];
        let ys = [2.1, 3.9, 6.2, 7.8, 10.1];
        let f = solve(&Line, &xs, &ys, &[0.0, 1.0]);
        assert!((f.theta[1] - 1.99).abs() < 1e-6, "{:?} {}", f.theta, f.rss);
        assert!((f.theta[0] - 0.05).abs() < 1e-6, "{:?}", f.theta);
        let cov = f.covariance.unwrap();
        assert!((cov[1][1].sqrt() - 0.0597).abs() < 1e-3, "{}", cov[1][1].sqrt());
    }

    #[test]
    fn respects_bounds() {
        let f = solve(&Line, &[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0], &[0.0, 1.0]);
        assert_eq!(f.theta[1], 0.0);
        assert!((f.theta[0] - 2.0).abs() < 1e-6, "{:?}", f.theta);
    }
}
