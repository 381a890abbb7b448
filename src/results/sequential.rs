//! How a sweep measured until its verdict was clear: the looks it took at its intervals, the
//! runs it added at each and why, the time they took against the budget, and what was still
//! undecided when the budget ran out.

use crate::stats::sequential::Confidence;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The sweep's record of its added runs (absent when the number of runs was fixed).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Sequential {
    /// Looks at the verdict that could add runs, the first pass's included.
    pub looks: u32,
    /// Seconds the first pass took (each point's least runs, warm-ups and hooks).
    pub first_pass_s: f64,
    /// Seconds the added runs may take in all.
    pub budget_s: f64,
    /// Seconds the added runs took.
    pub spent_s: f64,
    /// Runs added, look by look.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub added: Vec<Added>,
    /// What the runs could still not decide when the sweep stopped, in words.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub undecided: Vec<String>,
    /// Why no more runs were added while something was undecided: `the budget ran out`, `12 s of
    /// the budget left, too little for another round`, or the
    /// looks the intervals allow were spent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stopped_by: Option<String>,
}

impl Sequential {
    /// How sure the intervals are at the latest look.
    pub fn confidence(&self) -> Confidence {
        Confidence::at_look(self.looks.max(1))
    }
}

/// Runs added to one point at one look, and why.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Added {
    /// The look that added them (2 for the first additions).
    pub look: u32,
    /// Index into `points[]`.
    pub point: usize,
    /// Runs added.
    pub runs: u32,
    /// What they are to decide: `whether it scales at 2 threads` (the whole of it, where it stood
    /// included, in results written before `now` was kept apart, whose key was `why`).
    #[serde(alias = "why")]
    pub what: String,
    /// Where it stood when they were added: `efficiency 76–104% after 3 runs`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub now: String,
}

#[cfg(test)]
mod tests {
    use super::Added;

    #[test]
    fn added_runs_recorded_with_their_why_are_read_as_what_they_decide() {
        let old = r#"{"look":2,"point":0,"runs":3,"why":"whether it scales at 2 threads (efficiency 21–158% after 3 runs)"}"#;
        let a: Added = serde_json::from_str(old).unwrap();
        assert_eq!(a.what, "whether it scales at 2 threads (efficiency 21–158% after 3 runs)");
        assert!(a.now.is_empty());
    }
}
