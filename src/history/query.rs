//! Reading sweeps back: by filter (command, tags, machine, date, series), oldest first, with their
//! tags, models and findings; [`fill`] adds the points and every run when a figure needs them.

use super::HistoryError;
use super::record::{FindingRow, ModelRow, PointRow, RunRow, Sweep};
use super::store::{History, error};
use crate::machine::Machine;
use crate::results::provenance::Git;
use rusqlite::{Row, params_from_iter, types::Value};

/// Which sweeps to read.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Part of the command line.
    pub command: Option<String>,
    /// Tags that must all be set to these values.
    pub tags: Vec<(String, String)>,
    /// Part of the host name, CPU model or kernel.
    pub machine: Option<String>,
    /// Only sweeps started on or after this date (`2026-11-30` or a full ISO-8601 time, UTC).
    pub since: Option<String>,
    /// Only sweeps of this series (comparable sweeps).
    pub series: Option<String>,
    /// Only the newest N of those that match.
    pub last: Option<usize>,
}

/// Checks a `--since` date: `YYYY-MM-DD`, optionally followed by a time.
pub fn check_date(text: &str) -> Result<String, String> {
    let b = text.as_bytes();
    let ok = b.len() >= 10
        && b[..10]
            .iter()
            .enumerate()
            .all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() });
    if ok {
        Ok(text.to_string())
    } else {
        Err(format!("--since {text}: give a date as YYYY-MM-DD, e.g. 2026-11-30"))
    }
}

const COLUMNS: &str = "id, uid, series, kind, created, recorded, source, status, command, params, axis, basis,
    tool_version, host, cpu_model, logical_cpus, physical_cores, allowed_cpus, memory_bytes, os, kernel, arch,
    git_commit, git_dirty, git_branch";

/// The sweeps that match, oldest first, with their tags, models and findings (not their points).
pub fn sweeps(h: &History, f: &Filter) -> Result<Vec<Sweep>, HistoryError> {
    let mut sql = format!("SELECT {COLUMNS} FROM sweeps WHERE 1");
    let mut args: Vec<Value> = Vec::new();
    if let Some(c) = &f.command {
        sql.push_str(" AND instr(command, ?) > 0");
        args.push(Value::Text(c.clone()));
    }
    for (k, v) in &f.tags {
        sql.push_str(" AND EXISTS (SELECT 1 FROM tags t WHERE t.sweep = sweeps.id AND t.key = ? AND t.value = ?)");
        args.push(Value::Text(k.clone()));
        args.push(Value::Text(v.clone()));
    }
    if let Some(m) = &f.machine {
        sql.push_str(
            " AND (instr(host, ?1m) > 0 OR instr(cpu_model, ?1m) > 0 OR instr(kernel, ?1m) > 0)",
        );
        sql = sql.replace("?1m", "?");
        for _ in 0..3 {
            args.push(Value::Text(m.clone()));
        }
    }
    if let Some(s) = &f.since {
        sql.push_str(" AND created >= ?");
        args.push(Value::Text(s.clone()));
    }
    if let Some(s) = &f.series {
        sql.push_str(" AND series = ?");
        args.push(Value::Text(s.clone()));
    }
    sql.push_str(" ORDER BY created, id");
    let path = h.path().display().to_string();
    let fail = |e| error(&path, e);
    let conn = h.conn();
    let mut stmt = conn.prepare(&sql).map_err(fail)?;
    let mut out: Vec<Sweep> = stmt
        .query_map(params_from_iter(args), sweep_row)
        .map_err(fail)?
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    if let Some(n) = f.last {
        let drop = out.len().saturating_sub(n);
        out.drain(..drop);
    }
    for s in &mut out {
        details(h, s)?;
    }
    Ok(out)
}

/// One sweep by its row number.
pub fn by_id(h: &History, id: i64) -> Result<Sweep, HistoryError> {
    let path = h.path().display().to_string();
    let mut s = h
        .conn()
        .query_row(&format!("SELECT {COLUMNS} FROM sweeps WHERE id = ?1"), [id], sweep_row)
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => {
                HistoryError::Missing(format!("there is no sweep #{id} in the history {path}"))
            }
            e => error(&path, e),
        })?;
    details(h, &mut s)?;
    Ok(s)
}

fn sweep_row(r: &Row) -> rusqlite::Result<Sweep> {
    let commit: Option<String> = r.get(22)?;
    let dirty: Option<bool> = r.get(23)?;
    let branch: Option<String> = r.get(24)?;
    Ok(Sweep {
        id: r.get(0)?,
        uid: r.get(1)?,
        series: r.get(2)?,
        kind: r.get(3)?,
        created: r.get(4)?,
        recorded: r.get(5)?,
        source: r.get(6)?,
        status: r.get(7)?,
        command: r.get(8)?,
        params: r.get(9)?,
        axis: r.get(10)?,
        basis: r.get(11)?,
        tool_version: r.get(12)?,
        machine: Machine {
            host: r.get(13)?,
            cpu_model: r.get(14)?,
            logical_cpus: r.get::<_, i64>(15)? as usize,
            physical_cores: r.get::<_, i64>(16)? as usize,
            allowed_cpus: r.get::<_, i64>(17)? as usize,
            memory_bytes: r.get::<_, i64>(18)? as u64,
            os: r.get(19)?,
            kernel: r.get(20)?,
            arch: r.get(21)?,
            ..Machine::default()
        },
        git: commit.map(|commit| Git { commit, dirty: dirty.unwrap_or(false), branch }),
        ..Sweep::default()
    })
}

/// Reads a sweep's tags, models and findings.
fn details(h: &History, s: &mut Sweep) -> Result<(), HistoryError> {
    let path = h.path().display().to_string();
    let fail = |e| error(&path, e);
    let c = h.conn();
    let mut st =
        c.prepare("SELECT key, value FROM tags WHERE sweep = ?1 ORDER BY key").map_err(fail)?;
    s.tags = st
        .query_map([s.id], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(fail)?
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    let mut st = c
        .prepare(
            "SELECT series, baseline, largest, efficiency_at_largest, serial_fraction, serial_fraction_low,
                serial_fraction_high, usl_sigma, usl_kappa, usl_peak, best_count FROM models WHERE sweep = ?1 ORDER BY series",
        )
        .map_err(fail)?;
    s.models = st
        .query_map([s.id], |r| {
            let sf: Option<f64> = r.get(4)?;
            let lo: Option<f64> = r.get(5)?;
            let hi: Option<f64> = r.get(6)?;
            Ok(ModelRow {
                series: r.get(0)?,
                baseline: r.get(1)?,
                largest: r.get(2)?,
                efficiency_at_largest: r.get(3)?,
                serial_fraction: sf.map(|v| (v, lo.zip(hi).map(|(l, h)| [l, h]))),
                usl_sigma: r.get(7)?,
                usl_kappa: r.get(8)?,
                usl_peak: r.get(9)?,
                best_count: r.get(10)?,
            })
        })
        .map_err(fail)?
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    let mut st = c
        .prepare("SELECT kind, severity, summary, share_pct, at FROM findings WHERE sweep = ?1 ORDER BY rank")
        .map_err(fail)?;
    s.findings = st
        .query_map([s.id], |r| {
            Ok(FindingRow {
                kind: r.get(0)?,
                severity: r.get(1)?,
                summary: r.get(2)?,
                share_pct: r.get(3)?,
                at: r.get(4)?,
            })
        })
        .map_err(fail)?
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    Ok(())
}

/// Reads a sweep's points and every run.
pub fn fill(h: &History, s: &mut Sweep) -> Result<(), HistoryError> {
    let path = h.path().display().to_string();
    let fail = |e| error(&path, e);
    let c = h.conn();
    let mut st = c
        .prepare(
            "SELECT idx, label, params, series, count, mean_s, median_s, stddev_s, min_s, max_s, speedup, efficiency,
                karp_flatt FROM points WHERE sweep = ?1 ORDER BY idx",
        )
        .map_err(fail)?;
    s.points = st
        .query_map([s.id], |r| {
            let w: [Option<f64>; 5] = [r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?];
            Ok(PointRow {
                idx: r.get(0)?,
                label: r.get(1)?,
                params: r.get(2)?,
                series: r.get(3)?,
                count: r.get(4)?,
                wall: match w {
                    [Some(a), Some(b), Some(c), Some(d), Some(e)] => Some([a, b, c, d, e]),
                    _ => None,
                },
                speedup: r.get(10)?,
                efficiency: r.get(11)?,
                karp_flatt: r.get(12)?,
                runs: Vec::new(),
            })
        })
        .map_err(fail)?
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    let mut st = c
        .prepare(
            "SELECT point, ok, wall_s, user_s, sys_s, cpu_pct, throughput, others_cpus, pace_ns FROM runs WHERE sweep = ?1 ORDER BY point, idx",
        )
        .map_err(fail)?;
    let runs: Vec<(i64, RunRow)> = st
        .query_map([s.id], |r| {
            Ok((
                r.get(0)?,
                RunRow {
                    ok: r.get(1)?,
                    wall_s: r.get(2)?,
                    user_s: r.get(3)?,
                    sys_s: r.get(4)?,
                    cpu_pct: r.get(5)?,
                    throughput: r.get(6)?,
                    others_cpus: r.get(7)?,
                    pace_ns: r.get(8)?,
                },
            ))
        })
        .map_err(fail)?
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    for (point, run) in runs {
        if let Some(p) = s.points.iter_mut().find(|p| p.idx == point) {
            p.runs.push(run);
        }
    }
    Ok(())
}
