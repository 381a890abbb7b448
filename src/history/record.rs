//! One sweep as the history holds it ([`Sweep`]): built from a results document (or a table),
//! written as a row of `sweeps` with its tags, points, runs, models and findings, replacing the
//! entry of the same sweep when there is one (so importing a folder twice keeps one entry).

use super::HistoryError;
use super::store::History;
use crate::machine::Machine;
use crate::results::provenance::Git;
use crate::results::{Analysis, Results, Status};
use rusqlite::{OptionalExtension, Transaction, params};
use std::collections::BTreeMap;

/// A sweep in the history.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    /// Its row number (0 before it is written); sweeps are ordered by `created`, then by it.
    pub id: i64,
    /// What identifies the sweep across imports: its start, host and command line.
    pub uid: String,
    /// What makes sweeps comparable: the command, the parameters and the kind of machine.
    pub series: String,
    /// `sweep` for a results folder, `table` for a published table.
    pub kind: String,
    /// When the sweep started (ISO-8601 UTC).
    pub created: String,
    /// When it was recorded.
    pub recorded: String,
    /// The results folder or table it came from.
    pub source: String,
    /// `complete`, `interrupted`, `failed`…
    pub status: String,
    /// The command template as one line.
    pub command: String,
    /// The parameters and their values, as a JSON object.
    pub params: String,
    /// The counted parameter, when there is one.
    pub axis: Option<String>,
    /// `time` or `throughput`: what the rates come from.
    pub basis: Option<String>,
    /// The scalescope that measured it.
    pub tool_version: String,
    /// The machine.
    pub machine: Machine,
    /// The git state of the working directory, when it was in a repository.
    pub git: Option<Git>,
    /// The user's tags.
    pub tags: BTreeMap<String, String>,
    /// Every point (filled by [`super::query::fill`] when read back).
    pub points: Vec<PointRow>,
    /// The models of each series.
    pub models: Vec<ModelRow>,
    /// The findings, most important first.
    pub findings: Vec<FindingRow>,
}

/// A point and its runs.
#[derive(Clone, Debug, Default)]
pub struct PointRow {
    /// Its index in the sweep.
    pub idx: i64,
    /// `threads=4 size=big`.
    pub label: String,
    /// Its parameters as a JSON object.
    pub params: String,
    /// The series it belongs to (the other parameters), or empty.
    pub series: String,
    /// The counted parameter's value.
    pub count: Option<f64>,
    /// Wall-time statistics over the runs that succeeded: mean, median, σ, min, max.
    pub wall: Option<[f64; 5]>,
    /// Speed-up against the series' baseline.
    pub speedup: Option<f64>,
    /// Efficiency, when the count is a number of workers.
    pub efficiency: Option<f64>,
    /// Karp–Flatt serial fraction.
    pub karp_flatt: Option<f64>,
    /// Every run.
    pub runs: Vec<RunRow>,
}

impl PointRow {
    /// Wall times of the runs that succeeded.
    pub fn walls(&self) -> Vec<f64> {
        self.runs.iter().filter(|r| r.ok).filter_map(|r| r.wall_s).collect()
    }
}

/// One run.
#[derive(Clone, Debug, Default)]
pub struct RunRow {
    /// It exited by itself with code 0.
    pub ok: bool,
    /// Wall time, seconds (absent for a table of throughputs).
    pub wall_s: Option<f64>,
    /// User CPU seconds.
    pub user_s: Option<f64>,
    /// System CPU seconds.
    pub sys_s: Option<f64>,
    /// %CPU.
    pub cpu_pct: Option<f64>,
    /// Throughput, when measured.
    pub throughput: Option<f64>,
    /// The CPUs other processes kept busy during the run, on average, when it was sampled.
    pub others_cpus: Option<f64>,
    /// The machine's pace just before the run: nanoseconds per million steps of a fixed loop.
    pub pace_ns: Option<f64>,
}

/// The models fitted to one series of a sweep.
#[derive(Clone, Debug, Default)]
pub struct ModelRow {
    /// The series (other parameters), or empty.
    pub series: String,
    /// Its baseline count.
    pub baseline: f64,
    /// Its largest count.
    pub largest: f64,
    /// Efficiency at the largest count.
    pub efficiency_at_largest: Option<f64>,
    /// Amdahl's (or Gustafson's) serial fraction and its 95% interval.
    pub serial_fraction: Option<(f64, Option<[f64; 2]>)>,
    /// USL's σ (contention).
    pub usl_sigma: Option<f64>,
    /// USL's κ (coherency).
    pub usl_kappa: Option<f64>,
    /// USL's peak count.
    pub usl_peak: Option<f64>,
    /// The best count measured.
    pub best_count: Option<f64>,
}

/// A finding.
#[derive(Clone, Debug, Default)]
pub struct FindingRow {
    /// `lock-contention`…
    pub kind: String,
    /// `high`, `medium`, `low`, `info`.
    pub severity: String,
    /// Its one-line verdict.
    pub summary: String,
    /// Its share of the lost CPU capacity, percent.
    pub share_pct: Option<f64>,
    /// The count it was judged at.
    pub at: Option<f64>,
}

impl Sweep {
    /// The entry of a results document read from `source`; the analysis and findings are made
    /// when the document has none.
    pub fn of_results(doc: &Results, source: &str) -> Sweep {
        let mut doc_analysed;
        let doc = if doc.analysis.is_none() && doc.plan.axis.is_some() {
            doc_analysed = doc.clone();
            let axis = doc_analysed.plan.axis.clone();
            let _ = crate::diagnose::analyse(&mut doc_analysed, axis.as_ref(), &Default::default());
            &doc_analysed
        } else {
            doc
        };
        let plan = &doc.plan;
        let command = if plan.shell {
            plan.command.join(" ")
        } else {
            crate::report::command_line(&plan.command)
        };
        let params: serde_json::Map<String, serde_json::Value> =
            plan.params.iter().map(|p| (p.name.clone(), serde_json::json!(p.values))).collect();
        let params = serde_json::Value::Object(params).to_string();
        let first_start = doc
            .points
            .iter()
            .flat_map(|p| &p.runs)
            .map(|r| r.started_unix_s)
            .fold(f64::INFINITY, f64::min);
        let uid = super::hash(&format!(
            "sweep\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
            doc.created,
            doc.machine.host,
            doc.command_line.join("\u{1e}"),
            if first_start.is_finite() { format!("{first_start:.6}") } else { String::new() }
        ));
        let provenance = doc.provenance.clone().unwrap_or_default();
        let axis = plan.axis.as_ref().map(|a| a.param.clone());
        Sweep {
            id: 0,
            uid,
            series: series_key(
                "sweep",
                &format!("{}{command}", if plan.shell { "sh -c " } else { "" }),
                &params,
                &doc.machine,
            ),
            kind: "sweep".into(),
            created: doc.created.clone(),
            recorded: crate::results::time::iso_utc(crate::results::time::unix_now()),
            source: source.to_string(),
            status: status_name(doc.status).into(),
            command,
            params,
            basis: doc.analysis.as_ref().map(|a| basis_name(a).into()),
            axis: axis.clone(),
            tool_version: doc.scalescope_version.clone(),
            machine: doc.machine.clone(),
            git: provenance.git,
            tags: provenance.tags,
            points: points(doc, axis.as_deref()),
            models: doc.analysis.as_ref().map(models).unwrap_or_default(),
            findings: findings(&doc.findings),
        }
    }

    /// The git commit's short form, or the `commit`, `version`, `kernel` or `label` tag, or the
    /// start time.
    pub fn label(&self) -> String {
        self.version()
            .unwrap_or_else(|| self.created.get(..16).unwrap_or(&self.created).replace('T', " "))
    }

    /// What a `commit` column shows: as [`Sweep::label`], but `—` without a commit or tag (not
    /// the start time, which has a column of its own).
    pub fn commit_column(&self) -> String {
        self.version().unwrap_or_else(|| "—".into())
    }

    /// The git commit's short form, or the `commit`, `version`, `kernel` or `label` tag.
    fn version(&self) -> Option<String> {
        if let Some(g) = &self.git {
            return Some(g.short());
        }
        ["commit", "version", "kernel", "label"].iter().find_map(|k| self.tags.get(*k).cloned())
    }

    /// The kind of machine: what must match for sweeps to be compared.
    pub fn machine_text(&self) -> String {
        machine_kind(&self.machine)
    }
}

/// `Intel Xeon … / 64 CPUs / 256 GiB`: what must match for sweeps to be compared (the host's
/// name need not: CI runners change names).
pub fn machine_kind(m: &Machine) -> String {
    if m.cpu_model.is_empty() && m.allowed_cpus == 0 {
        return String::new();
    }
    format!(
        "{} / {} CPUs / {} GiB",
        m.cpu_model,
        m.allowed_cpus,
        (m.memory_bytes as f64 / (1u64 << 30) as f64).round()
    )
}

/// The key of comparable sweeps: the kind, the command, the parameters and the kind of machine.
pub fn series_key(kind: &str, command: &str, params: &str, machine: &Machine) -> String {
    super::hash(&format!("{kind}\u{1f}{command}\u{1f}{params}\u{1f}{}", machine_kind(machine)))
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::Running => "running",
        Status::Complete => "complete",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
    }
}

fn basis_name(a: &Analysis) -> &'static str {
    match a.basis {
        crate::results::analysis::Basis::Time => "time",
        crate::results::analysis::Basis::Throughput => "throughput",
    }
}

fn points(doc: &Results, axis: Option<&str>) -> Vec<PointRow> {
    doc.points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let scaling = doc.analysis.as_ref().and_then(|a| a.point(i));
            let series = doc
                .analysis
                .as_ref()
                .and_then(|a| a.series.iter().find(|s| s.points.iter().any(|q| q.index == i)))
                .map(|s| s.label.clone())
                .unwrap_or_default();
            let wall = p.stats().wall_s.map(|w| [w.mean, w.median, w.stddev, w.min, w.max]);
            PointRow {
                idx: i as i64,
                label: p.label(),
                params: serde_json::Value::Object(p.params.clone()).to_string(),
                series,
                count: axis.and_then(|a| p.params.get(a)).and_then(serde_json::Value::as_f64),
                wall,
                speedup: scaling.map(|s| s.speedup),
                efficiency: scaling.and_then(|s| s.efficiency),
                karp_flatt: scaling.and_then(|s| s.karp_flatt),
                runs: p
                    .runs
                    .iter()
                    .map(|r| RunRow {
                        ok: r.succeeded(),
                        wall_s: Some(r.wall_s),
                        user_s: Some(r.user_s),
                        sys_s: Some(r.sys_s),
                        cpu_pct: Some(r.cpu_pct),
                        throughput: r.throughput,
                        others_cpus: r.others_cpus(),
                        pace_ns: r.pace_ns,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The models of each series of an analysis.
pub fn models(a: &Analysis) -> Vec<ModelRow> {
    a.series
        .iter()
        .map(|s| {
            let serial = s
                .amdahl
                .as_ref()
                .map(|f| &f.serial_fraction)
                .or(s.gustafson.as_ref().map(|g| &g.serial_fraction))
                .map(|e| (e.value, e.ci95));
            ModelRow {
                series: s.label.clone(),
                baseline: s.baseline,
                largest: s.points.last().map_or(s.baseline, |p| p.count),
                efficiency_at_largest: s.points.last().and_then(|p| p.efficiency),
                serial_fraction: serial,
                usl_sigma: s.usl.as_ref().map(|u| u.sigma.value),
                usl_kappa: s.usl.as_ref().map(|u| u.kappa.value),
                usl_peak: s.usl.as_ref().and_then(|u| u.peak_count.map(|p| p.value)),
                best_count: s.best.as_ref().map(|b| b.count),
            }
        })
        .collect()
}

fn findings(list: &[crate::results::Finding]) -> Vec<FindingRow> {
    list.iter()
        .map(|f| FindingRow {
            kind: f.kind_name(),
            severity: f.severity.name().into(),
            summary: f.summary.clone(),
            share_pct: f.cost_pct,
            at: f.at,
        })
        .collect()
}

/// Writes `sweep`, replacing the entry with the same identity; returns its row number.
pub fn insert(h: &mut History, sweep: &Sweep) -> Result<i64, HistoryError> {
    h.write(|tx| write(tx, sweep))
}

/// Writes one sweep inside a transaction.
pub fn write(tx: &Transaction, s: &Sweep) -> rusqlite::Result<i64> {
    // The same sweep again (imported twice, resumed) keeps its place: its row number.
    let old: Option<i64> =
        tx.query_row("SELECT id FROM sweeps WHERE uid = ?1", [&s.uid], |r| r.get(0)).optional()?;
    tx.execute("DELETE FROM sweeps WHERE uid = ?1", [&s.uid])?;
    let m = &s.machine;
    tx.execute(
        "INSERT INTO sweeps (id, uid, series, kind, created, recorded, source, status, command, params, axis, basis,
            tool_version, host, cpu_model, logical_cpus, physical_cores, allowed_cpus, memory_bytes, os, kernel, arch,
            git_commit, git_dirty, git_branch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
        params![
            old,
            s.uid,
            s.series,
            s.kind,
            s.created,
            s.recorded,
            s.source,
            s.status,
            s.command,
            s.params,
            s.axis,
            s.basis,
            s.tool_version,
            m.host,
            m.cpu_model,
            m.logical_cpus as i64,
            m.physical_cores as i64,
            m.allowed_cpus as i64,
            m.memory_bytes as i64,
            m.os,
            m.kernel,
            m.arch,
            s.git.as_ref().map(|g| g.commit.clone()),
            s.git.as_ref().map(|g| g.dirty),
            s.git.as_ref().and_then(|g| g.branch.clone()),
        ],
    )?;
    let id = tx.last_insert_rowid();
    for (k, v) in &s.tags {
        tx.execute("INSERT INTO tags (sweep, key, value) VALUES (?1, ?2, ?3)", params![id, k, v])?;
    }
    for p in &s.points {
        let w = |i: usize| p.wall.map(|w| w[i]);
        tx.execute(
            "INSERT INTO points (sweep, idx, label, params, series, count, runs, mean_s, median_s, stddev_s, min_s, max_s,
                speedup, efficiency, karp_flatt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                id,
                p.idx,
                p.label,
                p.params,
                p.series,
                p.count,
                p.runs.len() as i64,
                w(0),
                w(1),
                w(2),
                w(3),
                w(4),
                p.speedup,
                p.efficiency,
                p.karp_flatt
            ],
        )?;
        for (i, r) in p.runs.iter().enumerate() {
            tx.execute(
                "INSERT INTO runs (sweep, point, idx, ok, wall_s, user_s, sys_s, cpu_pct, throughput, others_cpus, pace_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    id,
                    p.idx,
                    i as i64,
                    r.ok,
                    r.wall_s,
                    r.user_s,
                    r.sys_s,
                    r.cpu_pct,
                    r.throughput,
                    r.others_cpus,
                    r.pace_ns
                ],
            )?;
        }
    }
    for m in &s.models {
        let sf = m.serial_fraction;
        tx.execute(
            "INSERT INTO models (sweep, series, baseline, largest, efficiency_at_largest, serial_fraction,
                serial_fraction_low, serial_fraction_high, usl_sigma, usl_kappa, usl_peak, best_count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                id,
                m.series,
                m.baseline,
                m.largest,
                m.efficiency_at_largest,
                sf.map(|s| s.0),
                sf.and_then(|s| s.1).map(|c| c[0]),
                sf.and_then(|s| s.1).map(|c| c[1]),
                m.usl_sigma,
                m.usl_kappa,
                m.usl_peak,
                m.best_count
            ],
        )?;
    }
    for (rank, f) in s.findings.iter().enumerate() {
        tx.execute(
            "INSERT INTO findings (sweep, rank, kind, severity, summary, share_pct, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![id, rank as i64, f.kind, f.severity, f.summary, f.share_pct, f.at],
        )?;
    }
    Ok(id)
}
