//! The charts of a report, built from a results document and its analysis: throughput and time
//! against the counted parameter (error bars: 95% interval of the mean), speed-up with the ideal
//! line and the fitted Amdahl and USL curves, efficiency, %CPU, memory across the sweep, where
//! thread time went per point, and the timeline of thread states of one run. Several documents
//! overlay their series.

use super::figure::file_safe;
pub use super::figure::{Drawn, Figure};
use super::svg::{self, Bars, Chart, PALETTE, Series, Style};
use crate::results::analysis::SeriesAnalysis;
use crate::results::{Class, PointResult};

/// Reads a point's value and its error bar.
type Measure<'a> = dyn Fn(&PointResult) -> Option<(f64, Option<(f64, f64)>)> + 'a;

/// Colour of each class of thread time.
pub fn class_colour(c: Class) -> &'static str {
    match c {
        Class::CpuUser => "#0072B2",
        Class::CpuKernel => "#56B4E9",
        Class::Runqueue => "#E69F00",
        Class::Lock => "#D55E00",
        Class::WaitForWork => "#CC79A7",
        Class::Join => "#BBBBBB",
        Class::Io => "#009E73",
        Class::KernelLock => "#F0E442",
        Class::Ipc => "#8C564B",
        Class::Sleep => "#DDDDDD",
        Class::Other => "#999999",
        Class::Unsampled => "#EEEEEE",
    }
}

fn series_name(d: &Drawn, s: &SeriesAnalysis, what: &str) -> String {
    let parts: Vec<&str> =
        [d.label.as_str(), s.label.as_str(), what].into_iter().filter(|p| !p.is_empty()).collect();
    parts.join(" ")
}

/// Every chart for the sets (one set: a report; several: a comparison, series overlaid).
pub fn figures(sets: &[Drawn], timeline_run: Option<(usize, usize)>) -> Vec<Figure> {
    let mut out = Vec::new();
    let first = sets.iter().find_map(|d| d.doc.analysis.as_ref());
    if let Some(a0) = first {
        let x = a0.axis.param.clone();
        let mut colour = 0;
        let mut tp = Vec::new();
        let mut time = Vec::new();
        let mut speed = Vec::new();
        let mut eff = Vec::new();
        let mut cpu = Vec::new();
        for d in sets {
            let Some(a) = &d.doc.analysis else { continue };
            for s in &a.series {
                let c = PALETTE[colour % PALETTE.len()].to_string();
                colour += 1;
                let measured = |name: &str, f: &Measure| {
                    let mut pts = Vec::new();
                    let mut errs = Vec::new();
                    for p in &s.points {
                        if let Some((y, e)) = d.doc.points.get(p.index).and_then(f) {
                            pts.push((p.count, y));
                            errs.push(e);
                        }
                    }
                    Series {
                        name: series_name(d, s, name),
                        points: pts,
                        errors: errs,
                        style: Style::Measured,
                        colour: c.clone(),
                    }
                };
                let ci = |m: &crate::stats::Summary| Some((m.mean, m.ci95.map(|[l, h]| (l, h))));
                tp.push(measured("", &|p| p.stats().throughput.as_ref().and_then(ci)));
                time.push(measured("", &|p| p.stats().wall_s.as_ref().and_then(ci)));
                cpu.push(measured("", &|p| p.stats().cpu_pct.as_ref().and_then(ci)));
                let sp: Vec<(f64, f64)> = s.points.iter().map(|p| (p.count, p.speedup)).collect();
                let sp_err = s.points.iter().map(|p| p.speedup_ci95.map(|[l, h]| (l, h))).collect();
                speed.push(Series {
                    name: series_name(d, s, "measured"),
                    points: sp,
                    errors: sp_err,
                    style: Style::Measured,
                    colour: c.clone(),
                });
                let base_rate =
                    s.points.iter().find(|p| p.count == s.baseline).map(|p| p.rate).unwrap_or(0.0);
                let (lo, hi) = s
                    .points
                    .iter()
                    .fold((f64::MAX, 0.0f64), |(a, b), p| (a.min(p.count), b.max(p.count)));
                let grid: Vec<f64> =
                    (0..=60).map(|i| lo * (hi / lo).powf(i as f64 / 60.0)).collect();
                let mut curve = |name: &str, rates: Option<Vec<f64>>| {
                    if let (Some(rates), true) = (rates, base_rate > 0.0 && hi > lo) {
                        let pts =
                            grid.iter().zip(rates).map(|(&n, r)| (n, r / base_rate)).collect();
                        speed.push(Series {
                            name: series_name(d, s, name),
                            points: pts,
                            errors: vec![],
                            style: Style::Model,
                            colour: c.clone(),
                        });
                    }
                };
                curve(
                    "Amdahl fit",
                    s.amdahl.as_ref().map(|m| grid.iter().map(|&n| m.rate_at(n)).collect()),
                );
                curve(
                    "USL fit",
                    s.usl.as_ref().map(|m| grid.iter().map(|&n| m.rate_at(n)).collect()),
                );
                let e: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter_map(|p| Some((p.count, 100.0 * p.efficiency?)))
                    .collect();
                eff.push(Series {
                    name: series_name(d, s, ""),
                    points: e,
                    errors: vec![],
                    style: Style::Measured,
                    colour: c,
                });
            }
        }
        if let (Some(lo), Some(hi)) = (
            speed.iter().flat_map(|s| s.points.iter().map(|p| p.0)).reduce(f64::min),
            speed.iter().flat_map(|s| s.points.iter().map(|p| p.0)).reduce(f64::max),
        ) {
            let base = sets
                .iter()
                .find_map(|d| d.doc.analysis.as_ref()?.series.first().map(|s| s.baseline))
                .unwrap_or(lo);
            let grid: Vec<(f64, f64)> = (0..=20)
                .map(|i| lo * (hi / lo).powf(i as f64 / 20.0))
                .map(|n| (n, n / base))
                .collect();
            speed.insert(
                0,
                Series {
                    name: "ideal".into(),
                    points: grid,
                    errors: vec![],
                    style: Style::Reference,
                    colour: "#888".into(),
                },
            );
        }
        let unit = a0.unit.clone();
        let mut push = |id: &str, title: &str, y: &str, series: Vec<Series>, caption: &str| {
            if series.iter().any(|s| !s.points.is_empty()) {
                let chart =
                    Chart { title: title.into(), x_label: x.clone(), y_label: y.into(), series };
                out.push(Figure {
                    id: id.into(),
                    caption: caption.into(),
                    svg: svg::line_chart(&chart),
                });
            }
        };
        push(
            "throughput",
            "Throughput",
            &unit,
            tp,
            "mean throughput per point; bars: 95% interval of the mean",
        );
        push(
            "time",
            "Wall time per run",
            "seconds",
            time,
            "mean wall time per run; bars: 95% interval of the mean",
        );
        push(
            "speedup",
            "Speed-up",
            "× the baseline",
            speed,
            "measured speed-up (bars: 95% bootstrap interval), the ideal line and the fitted models",
        );
        push(
            "efficiency",
            "Parallel efficiency",
            "%",
            eff,
            "speed-up divided by the count relative to the baseline",
        );
        push(
            "cpu",
            "CPU utilisation",
            "% of one CPU",
            cpu,
            "user + system CPU time over wall time",
        );
    }
    out.extend(super::memory::sweep_figures(sets));
    if let [d] = sets {
        out.extend(super::memory::figures(d));
    }
    for d in sets {
        out.extend(stack_bars(d));
        if let Some(f) = thread_bars(d) {
            out.push(f);
        }
    }
    if let Some(d) = sets.first()
        && let Some(f) = timeline(d, timeline_run)
    {
        out.push(f);
    }
    out
}

/// Where thread time went, one stacked bar per sampled point.
fn thread_bars(d: &Drawn) -> Option<Figure> {
    let mut categories = Vec::new();
    let mut shares: Vec<Vec<f64>> = vec![Vec::new(); Class::ALL.len()];
    for p in &d.doc.points {
        let Some(t) = super::threads::of_point(p) else { continue };
        let total: f64 = t.classes.values().sum();
        if total <= 0.0 {
            continue;
        }
        categories.push(p.label());
        for (i, c) in Class::ALL.iter().enumerate() {
            shares[i].push(100.0 * t.classes.get(c).copied().unwrap_or(0.0) / total);
        }
    }
    if categories.is_empty() {
        return None;
    }
    let stacks = Class::ALL
        .iter()
        .zip(shares)
        .map(|(c, v)| (c.name().to_string(), class_colour(*c).to_string(), v))
        .collect();
    let title = if d.label.is_empty() {
        "Where thread time went".to_string()
    } else {
        format!("Where thread time went: {}", d.label)
    };
    Some(Figure {
        id: if d.label.is_empty() {
            "threads".into()
        } else {
            format!("threads-{}", file_safe(&d.label))
        },
        caption: "share of all threads' time per point, by state (from the thread-state sampler)"
            .into(),
        svg: svg::stacked_bars(&Bars { title, categories, stacks }),
    })
}

/// Colour of a part of a speed-up stack: its class's for a wait, the flame graphs' colours.
fn stack_colour(cause: &str) -> &'static str {
    if let Some(c) = Class::ALL.iter().find(|c| c.short() == cause) {
        return class_colour(*c);
    }
    match cause {
        "speed-up" => class_colour(Class::CpuUser),
        "other processes" => class_colour(Class::Runqueue),
        "no work" => class_colour(Class::Join),
        "unsampled" => class_colour(Class::Unsampled),
        "extra CPU" => class_colour(Class::CpuKernel),
        "sampling" => "#7F7F7F",
        "stolen" => "#B07AA1",
        "no CPU" => "#444444",
        "busy baseline" => "#76B7B2",
        _ => "#F7F7F7",
    }
}

/// Speed-up stacks, one bar per count: the count split into the speed-up, the cores each cause
/// took and what nothing explains, in % of the count.
fn stack_bars(d: &Drawn) -> Option<Figure> {
    let stacks = &d.doc.stacks;
    if stacks.is_empty() {
        return None;
    }
    let mut names: Vec<String> = vec!["speed-up".into()];
    for st in stacks {
        for p in &st.parts {
            if !names.contains(&p.cause) {
                names.push(p.cause.clone());
            }
        }
    }
    names.push("unexplained".into());
    let mut layers: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut categories = Vec::new();
    for st in stacks {
        let point = &d.doc.points[st.point];
        categories.push(if st.series.is_empty() {
            point.label()
        } else {
            format!("{} {}", st.series, point.label())
        });
        // A negative remainder (a speed-up over a baseline that idled) is drawn as none, the
        // rest scaled to fill the bar.
        let shown = st.speedup + st.lost() + st.unexplained.max(0.0);
        for (k, name) in names.iter().enumerate() {
            let cores = match name.as_str() {
                "speed-up" => st.speedup,
                "unexplained" => st.unexplained.max(0.0),
                n => st.parts.iter().filter(|p| p.cause == n).map(|p| p.cores).sum(),
            };
            layers[k].push(100.0 * cores / shown.max(1e-12));
        }
    }
    let stacks = names
        .iter()
        .zip(layers)
        .map(|(n, v)| (n.clone(), stack_colour(n).to_string(), v))
        .collect();
    let title = if d.label.is_empty() {
        "Speed-up stacks".to_string()
    } else {
        format!("Speed-up stacks: {}", d.label)
    };
    Some(Figure {
        id: if d.label.is_empty() { "stacks".into() } else { format!("stacks-{}", file_safe(&d.label)) },
        caption: "each count split into the measured speed-up, the cores each cause of lost capacity took and \
                  what nothing explains, in % of the count (from the capacity ledger)"
            .into(),
        svg: svg::stacked_bars(&Bars { title, categories, stacks }),
    })
}

/// The timeline of one run: `chosen` (point, run), else the first sampled run of the last point.
fn timeline(d: &Drawn, chosen: Option<(usize, usize)>) -> Option<Figure> {
    let (pi, ri) = match chosen {
        Some(c) => c,
        None => d.doc.points.iter().enumerate().rev().find_map(|(pi, p)| {
            p.runs
                .iter()
                .position(|r| {
                    r.counted() && r.threads.as_ref().is_some_and(|t| t.timeline.is_some())
                })
                .map(|ri| (pi, ri))
        })?,
    };
    let p = d.doc.points.get(pi)?;
    let t = p.runs.get(ri)?.threads.as_ref()?.timeline.as_ref()?;
    let widen = |v: &[f32]| v.iter().map(|x| f64::from(*x)).collect::<Vec<f64>>();
    let mut layers = vec![
        ("running".to_string(), class_colour(Class::CpuUser).to_string(), widen(&t.running)),
        ("runqueue".to_string(), class_colour(Class::Runqueue).to_string(), widen(&t.runnable)),
    ];
    for (c, v) in &t.waiting {
        layers.push((c.name().to_string(), class_colour(*c).to_string(), widen(v)));
    }
    let title = format!("Thread states over time: {} run {}", p.label(), ri + 1);
    Some(Figure {
        id: "timeline".into(),
        caption: format!("threads in each state over the run ({:.3} s bins)", t.bin_s),
        svg: svg::stacked_areas(&title, "threads", t.bin_s, &layers),
    })
}
