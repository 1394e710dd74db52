/*!
A zero-copy, total parser for the Prometheus text exposition format 0.0.4 and
OpenMetrics 1.0 text, as printed by `prometheus_client` (vLLM), Go's client
(dcgm-exporter), `/federate` and `promtool tsdb dump`.

The parser never fails and never panics: it yields every [`Event`] it could
read and records a [`Diagnostic`] (line number and reason) for each line it
had to skip. Nothing is allocated per sample: names, label blocks and HELP
text borrow from the input.

# Brief overview

* [`Parser`] is an iterator of [`Event`]s over one scrape's text.
* [`Event::Sample`] carries a [`Sample`]: name, [`Labels`], value, optional
  timestamp (always in milliseconds), and the raw `key` text that identifies
  the series inside the scrape.
* [`Labels::iter`] walks the label pairs; [`Label::value`] unescapes on demand.
* [`detect_format`] tells OpenMetrics (trailing `# EOF`) from text 0.0.4; it
  decides the unit of sample timestamps (seconds vs milliseconds).

# Example

```
use vllm_lens_expo::{Event, Parser};

let text = "# TYPE vllm:num_requests_running gauge\n\
            vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n\
            junk line\n";
let mut parser = Parser::new(text);
let samples: Vec<_> = parser
    .by_ref()
    .filter_map(|event| match event {
        Event::Sample(sample) => Some((sample.name, sample.value)),
        _ => None,
    })
    .collect();
assert_eq!(samples, vec![("vllm:num_requests_running", 3.0)]);
assert_eq!(parser.diagnostics().len(), 1);
assert_eq!(parser.diagnostics()[0].line, 3);
```
*/
#![deny(missing_docs)]

mod diagnostic;
mod labels;
mod parser;

pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use labels::{Label, LabelIter, Labels, unescape_help};
pub use parser::{
    Event, Format, KeyShape, MetricType, Parser, Sample, detect_format, parse_value, same_bytes,
};
