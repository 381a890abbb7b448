//! A sweep against the last comparable ones in the history (`compare --history`): the sweeps of
//! the same series (command, parameters, kind of machine) recorded before it, newest last, as
//! result sets for [`crate::compare`]. Their results folders are read when they are still there
//! (for the models and the why); otherwise the runs the history kept stand in for them.

use super::HistoryError;
use super::query::{self, Filter};
use super::record::Sweep;
use super::store::History;
use crate::compare::Set;
use crate::compare::{Measured, Values};
use crate::results::Results;

/// The last `n` sweeps comparable with `doc`, recorded before it (not itself), oldest first.
pub fn previous(h: &History, doc: &Results, n: usize) -> Result<Vec<Sweep>, HistoryError> {
    let own = Sweep::of_results(doc, "");
    let filter = Filter { series: Some(own.series.clone()), ..Filter::default() };
    let mut found: Vec<Sweep> = query::sweeps(h, &filter)?
        .into_iter()
        .filter(|s| s.uid != own.uid && s.created <= own.created)
        .collect();
    let drop = found.len().saturating_sub(n);
    found.drain(..drop);
    if found.is_empty() {
        return Err(HistoryError::Missing(format!(
            "the history {} holds no sweep comparable with this one (the same command, parameters and kind of machine, {}) before it",
            h.path().display(),
            own.machine_text()
        )));
    }
    for s in &mut found {
        query::fill(h, s)?;
    }
    Ok(found)
}

/// A sweep of the history as a result set: its folder when it still loads as the same sweep,
/// else its stored runs.
pub fn set(s: &Sweep) -> Set {
    let label = format!("#{} {}", s.id, s.label());
    if let Ok((dir, doc)) = crate::results::load(std::path::Path::new(&s.source))
        && Sweep::of_results(&doc, "").uid == s.uid
    {
        return Set::new(label, dir.display().to_string(), doc);
    }
    let points = s
        .points
        .iter()
        .map(|p| {
            let params: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&p.params).unwrap_or_default();
            let mut key: Vec<(String, String)> =
                params.iter().map(|(k, v)| (k.clone(), crate::results::value_text(v))).collect();
            key.sort();
            let ok: Vec<_> = p.runs.iter().filter(|r| r.ok).collect();
            let all = |f: fn(&super::record::RunRow) -> Option<f64>| {
                ok.iter().map(|r| f(r)).collect::<Option<Vec<f64>>>()
            };
            let values = (!ok.is_empty()).then(|| Values {
                time: all(|r| r.wall_s),
                throughput: all(|r| r.throughput),
                cpu: all(|r| r.cpu_pct),
                user: all(|r| r.user_s),
                sys: all(|r| r.sys_s),
            });
            Measured { key, label: p.label.clone(), values }
        })
        .collect();
    Set {
        label,
        path: format!("{} (from the history)", s.source),
        points,
        unit: None,
        analysis: None,
        doc: None,
    }
}
