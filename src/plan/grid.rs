//! The grid's points, made one at a time when asked for: the cartesian product of the parameters'
//! values (the first parameter outermost) or, under `--zip`, the values paired position by
//! position. Point `i` is computed from `i` alone, so a plan of a million points costs no more
//! memory than its value lists, and any point is ready in microseconds.

use super::error::PlanError;
use super::template::{Quote, placeholders, substitute};
use super::{Hooks, Plan, Point, launcher, work};
use std::path::PathBuf;

/// The most points a plan may have.
pub const MAX_POINTS: usize = 1_000_000;

impl Plan {
    /// How many points the grid has (saturating: a grid beyond [`MAX_POINTS`] fails its check).
    pub fn len(&self) -> usize {
        if self.zip {
            return self.params.first().map_or(1, |p| p.values.len());
        }
        self.params.iter().fold(1usize, |n, p| n.saturating_mul(p.values.len()))
    }

    /// Whether the grid has no point at all (a parameter without values).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parameter values of point `i`, in parameter order.
    pub fn params_at(&self, i: usize) -> Vec<(String, String)> {
        let mut rest = i;
        let mut digits = vec![0; self.params.len()];
        for (k, p) in self.params.iter().enumerate().rev() {
            let n = p.values.len().max(1);
            digits[k] = if self.zip { i } else { rest % n };
            rest /= n;
        }
        self.params.iter().zip(digits).map(|(p, d)| (p.name.clone(), p.values[d].clone())).collect()
    }

    /// Point `i` with every template substituted.
    pub fn point(&self, i: usize) -> Result<Point, PlanError> {
        let params = self.params_at(i);
        let plain = |t: &str| substitute(t, &params, Quote::None);
        let shell = |t: &Option<String>| {
            t.as_deref().map(|t| substitute(t, &params, Quote::Shell)).transpose()
        };
        let argv = if self.shell {
            vec![
                "sh".into(),
                "-c".into(),
                substitute(&self.command.join(" "), &params, Quote::Shell)?,
            ]
        } else {
            self.command.iter().map(|a| plain(a)).collect::<Result<_, _>>()?
        };
        let env = self
            .env
            .iter()
            .map(|(n, v)| Ok((n.clone(), plain(v)?)))
            .collect::<Result<_, PlanError>>()?;
        let hooks = Hooks {
            setup: shell(&self.hooks.setup)?,
            prepare: shell(&self.hooks.prepare)?,
            conclude: shell(&self.hooks.conclude)?,
            cleanup: shell(&self.hooks.cleanup)?,
        };
        let evict =
            self.evict.iter().map(|e| plain(e).map(PathBuf::from)).collect::<Result<_, _>>()?;
        let mut work =
            self.work.as_deref().map(|w| plain(w).and_then(|w| work::evaluate(&w))).transpose()?;
        // Copies each run the whole command: a run's work is theirs summed, unless `--work` counts
        // the copies itself.
        let copies = params
            .iter()
            .find(|(n, _)| n == launcher::COPIES)
            .and_then(|(_, v)| v.parse::<f64>().ok());
        if let (Some(w), Some(k)) = (work.as_mut(), copies)
            && !self.work.as_deref().is_some_and(|t| placeholders(t).contains(&launcher::COPIES))
        {
            w.amount *= k;
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let launch = launcher::launch_for(&self.launcher, &params, root)?;
        Ok(Point { params, argv, env, hooks, evict, work, launch })
    }

    /// Every point in grid order.
    pub fn points(&self) -> impl Iterator<Item = Result<Point, PlanError>> + '_ {
        (0..self.len()).map(|i| self.point(i))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Order, Param, Runs};
    use super::*;

    fn plan(params: &[(&str, &[&str])], zip: bool) -> Plan {
        Plan {
            command: vec!["prog".into()],
            shell: false,
            params: params
                .iter()
                .map(|(n, v)| Param {
                    name: n.to_string(),
                    values: v.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
            runs: Runs::fixed(1),
            warmup: 0,
            order: Order::Sequential,
            seed: 0,
            hooks: Hooks::default(),
            env: vec![],
            evict: vec![],
            metrics: vec![],
            work: None,
            timeout_s: None,
            ignore_failure: false,
            sample_rate_hz: None,
            no_trace: false,
            trace_every_run: false,
            scale: None,
            workers: false,
            weak: false,
            axis: None,
            baseline: None,
            ceiling: vec![],
            launcher: Default::default(),
            zip,
        }
    }

    fn values(p: &Plan, i: usize) -> Vec<String> {
        p.params_at(i).into_iter().map(|(_, v)| v).collect()
    }

    #[test]
    fn point_i_follows_the_cartesian_order_with_the_first_parameter_outermost() {
        let p = plan(&[("a", &["1", "2"]), ("b", &["x", "y", "z"])], false);
        assert_eq!(p.len(), 6);
        let all: Vec<Vec<String>> = (0..6).map(|i| values(&p, i)).collect();
        assert_eq!(all[0], ["1", "x"]);
        assert_eq!(all[2], ["1", "z"]);
        assert_eq!(all[3], ["2", "x"]);
        assert_eq!(all[5], ["2", "z"]);
    }

    #[test]
    fn a_point_substitutes_its_values_everywhere_and_quotes_them_for_the_shell() {
        let mut p = plan(&[("t", &["1", "a;b"])], false);
        p.command = vec!["prog".into(), "-t{t}".into()];
        p.env = vec![("OMP_NUM_THREADS".into(), "{t}".into())];
        p.work = Some("1GB*{t}".into());
        let point = p.point(0).unwrap();
        assert_eq!((point.argv[1].as_str(), point.env[0].1.as_str()), ("-t1", "1"));
        assert_eq!(point.work.unwrap().amount, 1e9);
        p.shell = true;
        p.work = None;
        p.command = vec!["echo".into(), "{t}".into()];
        assert_eq!(p.point(1).unwrap().argv, ["sh", "-c", "echo 'a;b'"]);
    }

    #[test]
    fn the_work_of_copies_is_each_copy_s_work_summed_unless_it_counts_them_itself() {
        let mut p = plan(&[("copies", &["1", "3"])], false);
        p.work = Some("events=10".into());
        let work = |p: &Plan, i| p.point(i).unwrap().work.unwrap().amount;
        assert_eq!((work(&p, 0), work(&p, 1)), (10.0, 30.0));
        p.work = Some("events=10*{copies}".into());
        assert_eq!((work(&p, 0), work(&p, 1)), (10.0, 30.0));
    }

    #[test]
    fn zip_pairs_by_position_and_no_parameter_is_one_point() {
        let p = plan(&[("a", &["1", "2"]), ("b", &["x", "y"])], true);
        assert_eq!((p.len(), values(&p, 1)), (2, vec!["2".to_string(), "y".to_string()]));
        let p = plan(&[], false);
        assert_eq!((p.len(), p.params_at(0)), (1, vec![]));
    }

    #[test]
    fn a_huge_grid_costs_nothing_until_a_point_is_asked_for() {
        let many: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let p = plan(&[("n", &refs), ("m", &refs)], false);
        assert_eq!(p.len(), 10_000_000_000);
        assert_eq!(values(&p, 10_000_000_000 - 1), ["99999", "99999"]);
    }
}
