//! Two causes the runs cannot rank: the first two raised at one count, of one severity, whose
//! shares of the lost capacity differ by less than the runs can tell. Which of them is listed
//! first is then the runs' luck (LAMMPS's two causes of about 40% each came in one order in one
//! sweep and in the other in the next), and the first says so, so that no one bets on the order.

use super::{Finding, Severity};
use crate::stats::Summary;

/// Says on the first raised cause when the next one at its count, of its severity, explains as
/// much within the runs' noise: the 95% interval of the per-run difference of their shares (the
/// same runs, paired) reaches 0.
pub fn say(out: &mut [Finding]) {
    let cause = |f: &Finding| {
        f.noise.is_none() && f.severity >= Severity::Medium && f.cost_per_run_pct.len() >= 2
    };
    let Some(i) = out.iter().position(cause) else { return };
    let Some(j) = out.iter().skip(i + 1).position(cause).map(|j| i + 1 + j) else { return };
    let (a, b) = (&out[i], &out[j]);
    if a.at != b.at
        || a.severity != b.severity
        || a.cost_per_run_pct.len() != b.cost_per_run_pct.len()
    {
        return;
    }
    let diffs: Vec<f64> =
        a.cost_per_run_pct.iter().zip(&b.cost_per_run_pct).map(|(x, y)| x - y).collect();
    let Some([lo, hi]) = Summary::of(&diffs).and_then(|s| s.ci95) else { return };
    if lo > 0.0 || hi < 0.0 {
        return;
    }
    let line = format!(
        "as large as the {} within the runs' noise: {:.0}% against {:.0}% of the lost capacity, the difference anywhere from {:+.0} to {:+.0} points over {} runs (95% interval): either may come first in another sweep",
        b.kind.name(),
        a.cost_pct.unwrap_or(0.0),
        b.cost_pct.unwrap_or(0.0),
        lo,
        hi,
        diffs.len()
    );
    out[i].evidence.push(line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::findings::Kind;

    fn cause(kind: Kind, per_run: &[f64]) -> Finding {
        Finding {
            cost_pct: Some(per_run.iter().sum::<f64>() / per_run.len() as f64),
            cost_per_run_pct: per_run.to_vec(),
            ..Finding::bare(kind, Severity::Medium, Some(2.0))
        }
    }

    /// LAMMPS's first sweep: on-cpu-inefficiency 40% and serial-phase 35% over the same 11 runs,
    /// their difference from −58 to +25 points run by run.
    #[test]
    fn two_causes_whose_shares_the_runs_cannot_rank_are_said_so_on_the_first() {
        let mut out = vec![
            cause(Kind::OnCpuInefficiency, &[6., 34., 24., 35., 45., 46., 46., 49., 51., 53., 52.]),
            cause(Kind::SerialPhase, &[64., 36., 37., 34., 28., 31., 30., 34., 31., 30., 29.]),
        ];
        say(&mut out);
        let said = out[0].evidence.join("\n");
        assert!(said.contains("as large as the serial-phase within the runs' noise"), "{said}");
        assert!(said.contains("over 11 runs") && out[1].evidence.is_empty(), "{said}");
        // Its second sweep: serial-phase ahead in every run but three, by 15 points on average.
        let mut out = vec![
            cause(Kind::SerialPhase, &[40., 46., 49., 54., 54., 44., 35., 42., 33., 41., 40., 55.]),
            cause(
                Kind::OnCpuInefficiency,
                &[36., 22., 27., 12., 22., 31., 33., 31., 39., 34., 38., 21.],
            ),
        ];
        say(&mut out);
        assert!(out[0].evidence.is_empty(), "{:?}", out[0].evidence);
        // Of different severities, the order is the severity's, not the runs' luck.
        let mut out = vec![
            cause(Kind::OnCpuInefficiency, &[40., 41., 39.]),
            Finding { severity: Severity::Low, ..cause(Kind::SerialPhase, &[39., 42., 38.]) },
        ];
        say(&mut out);
        assert!(out[0].evidence.is_empty(), "{:?}", out[0].evidence);
    }
}
