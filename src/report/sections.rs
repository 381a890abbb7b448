//! What every view of a results document shows — the table and the sections under it — computed
//! once per document and rendered to the terminal, the Markdown post and the HTML report.

use super::table::Table;
use super::{findings as finding_lines, lines, markdown, model, summary, terminal, threads};
use crate::results::{Finding, Results};

/// The table and the sections under it.
pub struct Sections {
    /// The summary table.
    pub table: Table,
    /// Top locks, system calls and hot functions per point.
    pub waits: Vec<String>,
    /// Every rank or copy of launched points.
    pub ranks: Vec<String>,
    /// The job's read rate against the measured I/O ceiling.
    pub ceiling: Vec<String>,
    /// The model block.
    pub model: Vec<String>,
    /// The speed-up stack of every count.
    pub stacks: Vec<String>,
    /// The diagnosis.
    pub findings: Vec<Finding>,
    /// Warnings of every point.
    pub notes: Vec<String>,
    /// The counted parameter's name (`threads`), to say a count in words.
    pub param: String,
}

impl Sections {
    /// Computes every section of `doc`, with the analysis and findings it holds.
    pub fn of(doc: &Results) -> Sections {
        let analysis = doc.analysis.as_ref();
        Sections {
            table: summary::summary(doc, analysis),
            waits: lines::waits(doc),
            ranks: threads::rank_lines(doc),
            ceiling: lines::ceiling(doc),
            model: analysis.map(model::lines).unwrap_or_default(),
            stacks: lines::stacks(doc),
            findings: doc.findings.clone(),
            notes: lines::notes(doc),
            param: analysis.map_or_else(|| "count".into(), |a| a.axis.param.clone()),
        }
    }

    /// A count in words: `2 threads`.
    pub fn count_words(&self, n: f64) -> String {
        crate::analysis::count_label(n, &self.param)
    }

    /// The text printed on a terminal; unless `all`, long tables and lists show their ends only.
    pub fn terminal(&self, colour: bool, all: bool) -> String {
        let shorten =
            |lines: &[String]| if all { lines.to_vec() } else { terminal::ends_of_lines(lines) };
        let table = if all { self.table.clone() } else { terminal::ends(&self.table) };
        let mut text = terminal::render(&table, colour);
        text.push_str(&terminal::render_section("waits", &shorten(&self.waits), colour));
        text.push_str(&terminal::render_section("ranks", &shorten(&self.ranks), colour));
        text.push_str(&terminal::render_section("I/O ceiling", &shorten(&self.ceiling), colour));
        text.push_str(&terminal::render_section("model", &self.model, colour));
        text.push_str(&terminal::render_section(
            "speed-up stacks (cores)",
            &shorten(&self.stacks),
            colour,
        ));
        text.push_str(&terminal::render_section(
            "findings",
            &finding_lines::lines(&self.findings, colour, &|n| self.count_words(n)),
            colour,
        ));
        text.push_str(&terminal::render_warnings("notes", &shorten(&self.notes), colour));
        text
    }

    /// The Markdown post: the command, machine and table, then each section under its heading.
    pub fn markdown(&self, doc: &Results) -> String {
        let sections = [
            markdown::list("Model", &self.model),
            markdown::list("Speed-up stacks (cores)", &self.stacks),
            markdown::findings(&self.findings, &|n| self.count_words(n)),
            markdown::list("Waits", &self.waits),
            markdown::list("Ranks and copies", &self.ranks),
            markdown::list("I/O ceiling", &self.ceiling),
            markdown::list("Notes", &self.notes),
        ];
        markdown::document(doc, &self.table, &sections.concat())
    }
}
