//! Call stacks of one run by phase, as stored in results.json (`threads.stacks`): on-CPU stacks
//! with their sample counts and off-CPU stacks with the cause and the seconds spent, frames and
//! stacks interned so that a 64-thread run stays small; profiles of several ranks or runs add up.

use super::{Class, Phase, Phases};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The modules of the OpenMP runtimes (GNU's, LLVM's, Intel's): they call the work they hand out
/// on every thread of a team, and their threads spin in their own code while they wait.
pub const OPENMP_RUNTIMES: [&str; 3] = ["libgomp.so", "libomp.so", "libiomp5.so"];

/// A frame: function and module.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct StackFrame {
    /// Demangled function, or `module+0x…` without a symbol.
    pub function: String,
    /// Module file name.
    pub module: String,
}

/// On-CPU samples of one stack in one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OnCpuStack {
    /// Index into `stacks`.
    pub stack: u32,
    /// The phase.
    pub phase: Phase,
    /// Samples.
    pub samples: u64,
}

/// Off-CPU time of one stack, cause and phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OffCpuStack {
    /// Index into `stacks`.
    pub stack: u32,
    /// The phase.
    pub phase: Phase,
    /// What the thread waited on.
    pub class: Class,
    /// Thread seconds.
    pub seconds: f64,
}

/// The call stacks of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StackProfile {
    /// Every frame once.
    pub frames: Vec<StackFrame>,
    /// Every stack once, as indices into `frames`, outermost first.
    pub stacks: Vec<Vec<u32>>,
    /// On-CPU samples (one every `sample_period_ms` of a thread's CPU time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_cpu: Vec<OnCpuStack>,
    /// CPU time between on-CPU samples, milliseconds.
    #[serde(default)]
    pub sample_period_ms: f64,
    /// Off-CPU time by stack and cause.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub off_cpu: Vec<OffCpuStack>,
    /// Where the phases lie.
    pub phases: Phases,
}

impl StackProfile {
    /// The frames of stack `i`, outermost first.
    pub fn frames_of(&self, i: u32) -> impl Iterator<Item = &StackFrame> {
        self.stacks
            .get(i as usize)
            .into_iter()
            .flatten()
            .filter_map(|&f| self.frames.get(f as usize))
    }

    /// Adds another profile (another rank or run), re-indexing its frames and stacks.
    pub fn absorb(&mut self, o: &StackProfile) {
        let mut frame_ids: HashMap<StackFrame, u32> =
            self.frames.iter().cloned().enumerate().map(|(i, f)| (f, i as u32)).collect();
        let fmap: Vec<u32> = o
            .frames
            .iter()
            .map(|f| {
                *frame_ids.entry(f.clone()).or_insert_with(|| {
                    self.frames.push(f.clone());
                    (self.frames.len() - 1) as u32
                })
            })
            .collect();
        let mut stack_ids: HashMap<Vec<u32>, u32> =
            self.stacks.iter().cloned().enumerate().map(|(i, s)| (s, i as u32)).collect();
        let smap: Vec<u32> = o
            .stacks
            .iter()
            .map(|s| {
                let s: Vec<u32> = s.iter().filter_map(|&f| fmap.get(f as usize).copied()).collect();
                *stack_ids.entry(s.clone()).or_insert_with(|| {
                    self.stacks.push(s);
                    (self.stacks.len() - 1) as u32
                })
            })
            .collect();
        for s in &o.on_cpu {
            let Some(&stack) = smap.get(s.stack as usize) else { continue };
            match self.on_cpu.iter_mut().find(|m| m.stack == stack && m.phase == s.phase) {
                Some(m) => m.samples += s.samples,
                None => self.on_cpu.push(OnCpuStack { stack, ..s.clone() }),
            }
        }
        for s in &o.off_cpu {
            let Some(&stack) = smap.get(s.stack as usize) else { continue };
            match self
                .off_cpu
                .iter_mut()
                .find(|m| m.stack == stack && m.phase == s.phase && m.class == s.class)
            {
                Some(m) => m.seconds += s.seconds,
                None => self.off_cpu.push(OffCpuStack { stack, ..s.clone() }),
            }
        }
    }
}
