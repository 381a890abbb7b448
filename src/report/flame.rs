//! Flame graphs of the stacks a run stored: on-CPU (sample counts), off-CPU (seconds, each frame
//! coloured by the cause that dominates it) and differential (after against before, red where
//! a frame's share grew), as inline SVG that reads without script (tooltips are `<title>`s); a
//! small inline script adds click-to-zoom and search. Also the folded-stack text
//! (`frame;frame;frame count`) that inferno, speedscope and flamegraph.pl read.

use super::charts::class_colour;
use super::svg::escape;
use crate::results::{Class, Phase, PointResult, Results, StackProfile};
use std::collections::BTreeMap;

const WIDTH: f64 = 1160.0;
const ROW: f64 = 17.0;
const TOP: f64 = 24.0;
/// Frames narrower than this share of the whole are left out (they would be invisible).
const MIN_SHARE: f64 = 0.001;

/// One frame of the merged tree.
#[derive(Default)]
struct Node {
    value: f64,
    /// The other profile's value (differential graphs).
    before: f64,
    /// Off-CPU seconds by cause.
    causes: BTreeMap<Class, f64>,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn add(&mut self, path: &[String], value: f64, cause: Option<Class>, before: bool) {
        if before {
            self.before += value;
        } else {
            self.value += value;
            if let Some(c) = cause {
                *self.causes.entry(c).or_default() += value;
            }
        }
        if let Some((head, rest)) = path.split_first() {
            self.children.entry(head.clone()).or_default().add(rest, value, cause, before);
        }
    }

    fn depth(&self) -> usize {
        self.children.values().map(|c| 1 + c.depth()).max().unwrap_or(0)
    }
}

/// What a graph shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// On-CPU samples.
    OnCpu,
    /// Off-CPU seconds by cause.
    OffCpu,
}

/// The stacks of every run of a point, added up.
pub fn point_profile(point: &PointResult) -> Option<StackProfile> {
    let mut out: Option<StackProfile> = None;
    for p in point.runs.iter().filter_map(|r| r.threads.as_ref()?.stacks.as_ref()) {
        match &mut out {
            Some(o) => o.absorb(p),
            None => out = Some(p.clone()),
        }
    }
    out
}

/// A frame's text: `function` (`;` and line breaks would break the folded format).
fn label(f: &crate::results::StackFrame) -> String {
    f.function.replace([';', '\n', '\r'], ":")
}

/// The weighted stacks of one kind and phase (all phases for `None`), outermost frame first.
fn weighted(
    p: &StackProfile,
    kind: Kind,
    phase: Option<Phase>,
) -> Vec<(Vec<String>, f64, Option<Class>)> {
    let path = |s: u32| p.frames_of(s).map(label).collect::<Vec<_>>();
    let keep = |ph: Phase| phase.is_none_or(|x| x == ph);
    match kind {
        Kind::OnCpu => p
            .on_cpu
            .iter()
            .filter(|s| keep(s.phase))
            .map(|s| (path(s.stack), s.samples as f64, None))
            .collect(),
        Kind::OffCpu => p
            .off_cpu
            .iter()
            .filter(|s| keep(s.phase))
            .map(|s| (path(s.stack), s.seconds, Some(s.class)))
            .collect(),
    }
}

/// Folded stacks of a profile, on-CPU and off-CPU together in microseconds of thread time, each
/// line under `root` and `on-CPU` or `off-CPU <cause>`: `root;off-CPU lock;main;worker;… 35000`.
pub fn folded(p: &StackProfile, root: &str) -> Vec<String> {
    let root = root.replace([';', '\n'], ":");
    let mut lines: BTreeMap<String, f64> = BTreeMap::new();
    for (path, samples, _) in weighted(p, Kind::OnCpu, None) {
        let key = format!("{root};on-CPU;{}", path.join(";"));
        *lines.entry(key).or_default() += samples * p.sample_period_ms * 1e3;
    }
    for (path, secs, class) in weighted(p, Kind::OffCpu, None) {
        let cause = class.map_or("off-CPU", |c| c.name());
        let key = format!("{root};off-CPU {cause};{}", path.join(";"));
        *lines.entry(key).or_default() += secs * 1e6;
    }
    lines
        .into_iter()
        .filter(|(_, v)| v.round() >= 1.0)
        .map(|(k, v)| format!("{k} {}", v.round() as u64))
        .collect()
}

/// The folded stacks of every point of a results document (one root frame per point).
pub fn folded_document(doc: &Results) -> String {
    let mut out = String::new();
    for point in &doc.points {
        if let Some(p) = point_profile(point) {
            for l in folded(&p, &point.label()) {
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
    out
}

/// A flame graph of one kind and phase; `None` when there is nothing to draw.
pub fn graph(p: &StackProfile, kind: Kind, phase: Option<Phase>, title: &str) -> Option<String> {
    let mut root = Node::default();
    for (path, v, cause) in weighted(p, kind, phase) {
        root.add(&path, v, cause, false);
    }
    let unit = match kind {
        Kind::OnCpu => Unit::Samples(p.sample_period_ms),
        Kind::OffCpu => Unit::Seconds,
    };
    render(&root, title, unit, kind)
}

/// A differential flame graph: `after`'s on-CPU stacks, each frame red where its share of the
/// samples grew against `before` and blue where it shrank.
pub fn differential(before: &StackProfile, after: &StackProfile, title: &str) -> Option<String> {
    let mut root = Node::default();
    let total = |p: &StackProfile| p.on_cpu.iter().map(|s| s.samples).sum::<u64>().max(1) as f64;
    let (tb, ta) = (total(before), total(after));
    for (path, v, _) in weighted(after, Kind::OnCpu, None) {
        root.add(&path, v / ta, None, false);
    }
    for (path, v, _) in weighted(before, Kind::OnCpu, None) {
        root.add(&path, v / tb, None, true);
    }
    render(&root, title, Unit::Share, Kind::OnCpu)
        .map(|s| s.replace("data-kind=\"on\"", "data-kind=\"diff\""))
}

#[derive(Clone, Copy)]
enum Unit {
    Samples(f64),
    Seconds,
    Share,
}

impl Unit {
    fn text(self, v: f64, total: f64) -> String {
        let pct = 100.0 * v / total.max(f64::MIN_POSITIVE);
        match self {
            Unit::Samples(ms) => {
                let n = v as u64;
                format!(
                    "{n} sample{}, ~{:.3} s of CPU, {pct:.1}%",
                    if n == 1 { "" } else { "s" },
                    v * ms * 1e-3
                )
            }
            Unit::Seconds => format!("{v:.3} thread seconds, {pct:.1}%"),
            Unit::Share => format!("{pct:.1}% of samples"),
        }
    }
}

fn render(root: &Node, title: &str, unit: Unit, kind: Kind) -> Option<String> {
    if root.value <= 0.0 {
        return None;
    }
    let depth = root.depth();
    let height = TOP + (depth + 1) as f64 * ROW + 4.0;
    let mut out = format!(
        "<svg class=\"flame\" data-kind=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" font-family=\"system-ui,sans-serif\" font-size=\"11\"><text x=\"4\" y=\"15\" font-size=\"13\">{}</text>",
        if kind == Kind::OnCpu { "on" } else { "off" },
        escape(title)
    );
    let diff = matches!(unit, Unit::Share);
    frame(&mut out, "all", root, root.value, 0.0, 0, height, unit, diff, kind);
    out.push_str("</svg>");
    Some(out)
}

#[allow(clippy::too_many_arguments)]
fn frame(
    out: &mut String,
    name: &str,
    n: &Node,
    total: f64,
    x: f64,
    d: usize,
    h: f64,
    unit: Unit,
    diff: bool,
    kind: Kind,
) {
    let w = n.value / total * WIDTH;
    if n.value / total < MIN_SHARE {
        return;
    }
    let y = h - 4.0 - (d + 1) as f64 * ROW;
    let fill = if diff {
        diff_colour(n.value, n.before)
    } else if kind == Kind::OffCpu {
        n.causes
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or("#ccc", |(c, _)| class_colour(*c))
            .to_string()
    } else {
        warm(name)
    };
    let mut tip = format!("{name}: {}", unit.text(n.value, total));
    if diff {
        tip.push_str(&format!(" (before {:.1}%)", 100.0 * n.before));
    }
    if kind == Kind::OffCpu && n.causes.len() > 1 {
        let causes: Vec<String> =
            n.causes.iter().map(|(c, s)| format!("{} {:.3} s", c.name(), s)).collect();
        tip.push_str(&format!(" ({})", causes.join(", ")));
    }
    let chars = ((w - 6.0) / 6.3).max(0.0) as usize;
    let text = if name.chars().count() <= chars {
        name.to_string()
    } else if chars > 2 {
        format!("{}…", name.chars().take(chars - 1).collect::<String>())
    } else {
        String::new()
    };
    out.push_str(&format!(
        "<g class=\"f\" data-x=\"{:.6}\" data-w=\"{:.6}\" data-d=\"{d}\" data-n=\"{}\"><title>{}</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{fill}\" rx=\"1\"/><text x=\"{:.2}\" y=\"{:.1}\">{}</text></g>",
        x / WIDTH,
        w / WIDTH,
        escape(name),
        escape(&tip),
        (w - 0.5).max(0.1),
        ROW - 1.0,
        x + 3.0,
        y + ROW - 5.0,
        escape(&text)
    ));
    let mut cx = x;
    for (child, c) in &n.children {
        frame(out, child, c, total, cx, d + 1, h, unit, diff, kind);
        cx += c.value / total * WIDTH;
    }
}

/// A warm colour chosen by the name, so a function keeps its colour across graphs.
fn warm(name: &str) -> String {
    let h = name.bytes().fold(2166136261u32, |a, b| (a ^ b as u32).wrapping_mul(16777619));
    let (r, g, b) = (205 + h % 50, 80 + (h >> 8) % 120, 40 + (h >> 16) % 50);
    format!("rgb({r},{g},{b})")
}

/// Red where the share grew, blue where it shrank, white when unchanged.
fn diff_colour(after: f64, before: f64) -> String {
    let delta = (after - before) / after.max(before).max(1e-9);
    let k = (255.0 * (1.0 - delta.abs().min(1.0))) as u8;
    if delta >= 0.0 { format!("rgb(255,{k},{k})") } else { format!("rgb({k},{k},255)") }
}

/// Click-to-zoom and search for every flame graph of a page; without it the graphs still read.
pub const SCRIPT: &str = r#"<script>
document.querySelectorAll('svg.flame').forEach(function(svg){
  var W=+svg.getAttribute('width'),fs=[].slice.call(svg.querySelectorAll('g.f'));
  function lay(x0,w0,d0){fs.forEach(function(g){var x=+g.dataset.x,w=+g.dataset.w,d=+g.dataset.d,r=g.querySelector('rect'),t=g.querySelector('text');
    var inside=d<d0?(x<=x0+1e-9&&x+w>=x0+w0-1e-9):(x>=x0-1e-9&&x+w<=x0+w0+1e-9);
    g.style.display=inside?'':'none';if(!inside)return;
    var nx=d<d0?0:(x-x0)/w0*W,nw=d<d0?W:w/w0*W;r.setAttribute('x',nx);r.setAttribute('width',Math.max(nw-0.5,0.1));t.setAttribute('x',nx+3);
    var n=g.dataset.n,c=Math.floor((nw-6)/6.3);t.textContent=n.length<=c?n:(c>2?n.slice(0,c-1)+'…':'');});}
  fs.forEach(function(g){g.style.cursor='pointer';g.addEventListener('click',function(){lay(+g.dataset.x,+g.dataset.w,+g.dataset.d);});});
  var box=document.createElement('input');box.placeholder='search';box.style.margin='0 0 .3em 0';svg.parentNode.insertBefore(box,svg);
  box.addEventListener('input',function(){var q=box.value.toLowerCase();fs.forEach(function(g){var r=g.querySelector('rect');
    if(!r.dataset.f)r.dataset.f=r.getAttribute('fill');r.setAttribute('fill',q&&g.dataset.n.toLowerCase().indexOf(q)>=0?'#e040fb':r.dataset.f);});});
});
</script>"#;

/// The report's flame graph section: per point, on-CPU and off-CPU over the whole run, and per
/// phase in folded-away details. Empty when no run stored stacks.
pub fn section(doc: &Results) -> String {
    let mut body = String::new();
    for (i, point) in doc.points.iter().enumerate() {
        let Some(p) = point_profile(point) else { continue };
        let label = point.label();
        let mut graphs = String::new();
        for (kind, what) in [(Kind::OnCpu, "on-CPU"), (Kind::OffCpu, "off-CPU, coloured by cause")]
        {
            if let Some(svg) = graph(&p, kind, None, &format!("{label}: {what}")) {
                graphs.push_str(&format!("<figure>{svg}</figure>"));
            }
        }
        let mut phases = String::new();
        for phase in Phase::ALL {
            for (kind, what) in [(Kind::OnCpu, "on-CPU"), (Kind::OffCpu, "off-CPU")] {
                if let Some(svg) =
                    graph(&p, kind, Some(phase), &format!("{label}, {}: {what}", phase.name()))
                {
                    phases.push_str(&format!("<figure>{svg}</figure>"));
                }
            }
        }
        body.push_str(&format!(
            "<details{}><summary>{}</summary>{graphs}<details><summary>by phase (start-up until {:.2} s, tail from {:.2} s)</summary>{phases}</details></details>",
            if i + 1 == doc.points.len() { " open" } else { "" },
            escape(&label),
            p.phases.startup_end_s,
            p.phases.tail_start_s
        ));
    }
    if body.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Flame graphs</h2><p>Width is time: on-CPU samples, or thread seconds off a CPU coloured by cause ({}). Click a frame to zoom, the bottom frame to reset.</p>{body}{SCRIPT}\n",
        legend()
    )
}

fn legend() -> String {
    Class::ALL
        .iter()
        .filter(|c| !matches!(c, Class::CpuUser | Class::CpuKernel))
        .map(|c| format!("<span style=\"color:{}\">■</span> {}", class_colour(*c), c.name()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Differential on-CPU flame graphs of the points two documents share, `after` against `before`.
pub fn compare_section(before: (&str, &Results), after: (&str, &Results)) -> String {
    let mut body = String::new();
    for pa in &after.1.points {
        let label = pa.label();
        let Some(pb) = before.1.points.iter().find(|p| p.label() == label) else { continue };
        let (Some(b), Some(a)) = (point_profile(pb), point_profile(pa)) else { continue };
        let title = format!("{label}: {} against {}", after.0, before.0);
        if let Some(svg) = differential(&b, &a, &title) {
            body.push_str(&format!("<figure>{svg}</figure>"));
        }
    }
    if body.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Differential flame graphs</h2><p>On-CPU stacks of {}: red where a frame's share of the samples grew against {}, blue where it shrank.</p>{body}{SCRIPT}\n",
        escape(after.0),
        escape(before.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{OffCpuStack, OnCpuStack, Phases, StackFrame};

    fn profile() -> StackProfile {
        let f = |n: &str| StackFrame { function: n.into(), module: "prog".into() };
        StackProfile {
            frames: vec![
                f("main"),
                f("worker"),
                f("update_histogram"),
                f("pthread_mutex_lock"),
                f("a;b"),
            ],
            stacks: vec![vec![0, 1, 2], vec![0, 1, 2, 3], vec![0, 4]],
            on_cpu: vec![
                OnCpuStack { stack: 0, phase: Phase::Steady, samples: 30 },
                OnCpuStack { stack: 2, phase: Phase::Startup, samples: 10 },
            ],
            sample_period_ms: 10.0,
            off_cpu: vec![OffCpuStack {
                stack: 1,
                phase: Phase::Steady,
                class: Class::Lock,
                seconds: 1.5,
            }],
            phases: Phases { startup_end_s: 0.1, tail_start_s: 2.0 },
        }
    }

    #[test]
    fn folded_lines_carry_microseconds_of_thread_time() {
        let lines = folded(&profile(), "threads=4");
        assert!(
            lines.contains(&"threads=4;on-CPU;main;worker;update_histogram 300000".to_string()),
            "{lines:?}"
        );
        assert!(lines.contains(&"threads=4;on-CPU;main;a:b 100000".to_string()), "{lines:?}");
        assert!(
            lines.contains(
                &"threads=4;off-CPU lock;main;worker;update_histogram;pthread_mutex_lock 1500000"
                    .to_string()
            ),
            "{lines:?}"
        );
    }

    #[test]
    fn graphs_hold_every_frame_with_its_tooltip_and_colour() {
        let p = profile();
        let on = graph(&p, Kind::OnCpu, None, "on <cpu>").unwrap();
        assert!(
            on.contains("data-n=\"update_histogram\"")
                && on.contains("30 samples, ~0.300 s of CPU, 75.0%"),
            "{on}"
        );
        assert!(on.contains("on &lt;cpu&gt;"));
        let off = graph(&p, Kind::OffCpu, None, "off").unwrap();
        assert!(
            off.contains(class_colour(Class::Lock)) && off.contains("1.500 thread seconds"),
            "{off}"
        );
        assert!(graph(&p, Kind::OffCpu, Some(Phase::Tail), "none").is_none());
        let startup = graph(&p, Kind::OnCpu, Some(Phase::Startup), "s").unwrap();
        assert!(!startup.contains("update_histogram"));
    }

    #[test]
    fn a_frame_that_grew_is_red_and_one_that_shrank_is_blue() {
        let before = profile();
        let mut after = profile();
        after.on_cpu[0].samples = 90;
        let svg = differential(&before, &after, "d").unwrap();
        let colour_of = |name: &str| {
            let at = svg.find(&format!("data-n=\"{name}\"")).unwrap();
            svg[at..].split("fill=\"").nth(1).unwrap().split('"').next().unwrap().to_string()
        };
        assert!(colour_of("update_histogram").starts_with("rgb(255,"), "{svg}");
        assert!(
            colour_of("a:b").starts_with("rgb(") && colour_of("a:b").ends_with(",255)"),
            "{svg}"
        );
    }
}
