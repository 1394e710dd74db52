/*!
The report model: what the analysis crate produces and the renderers, the
core and the shells read. Nothing here reads a bundle or judges anything;
it is the contract between the judgement (`vllm-lens-analysis`) and its
printers (`vllm-lens-render`), serialised as the report's JSON
(`docs/report-schema.md`).

# Contents

* [`report`]: the report's types ([`Report`] and everything in it), also
  re-exported at the root.
* [`ids`]: every typed identifier (findings, recommendations, SLOs,
  phases, timeline and data-quality kinds), serialised as the JSON's
  strings.
* [`levers`]: the settings a recommendation turns ([`Knob`] × [`Direction`])
  and where each exists.
* [`steps`]: the six steps of the walk-through as they are drawn (titles,
  charts, the per-window table, "how to read this").
* [`compare`]: two reports compared, as the comparison's JSON.
* [`forecast`]: what each change would give, predicted by a model
  calibrated on the capture (`forecast` in the report).
* [`text`] and [`time`]: figures and times in words, shared by the
  analyses' prose and the renderers.
*/
#![deny(missing_docs)]

pub mod compare;
pub mod forecast;
pub mod ids;
pub mod levers;
pub mod report;
pub mod steps;
pub mod text;
pub mod time;

pub use report::*;
