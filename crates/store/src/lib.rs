/*!
The series store: every (name, label set) series of every target of a bundle,
with its (time, value) points.

Scrapes go in as text through [`Store::ingest`]; the exposition is parsed with
`vllm-lens-expo` and each sample lands in its series. Strings are interned,
label sets are interned, and points are kept columnar (times and values in two
vectors per series, 16 bytes a point). A target's identity labels (`job`,
`instance`, and whatever the manifest adds, such as `pod` and `node`) are
attached to each of its series, the way Prometheus attaches target labels:
a sample label of the same name is kept as `exported_<name>`.

# Brief overview

* [`Store`] owns everything; [`Store::add_target`] registers a [`Target`].
* [`Store::ingest`] parses one scrape and returns an [`Ingested`] summary
  with the parser's diagnostics.
* [`Store::finish`] sorts and de-duplicates points and releases slack memory.
* [`Series`] is one series; [`Family`] groups the series of one metric family
  and knows its [`MetricType`] and each series' [`Role`] in it (a histogram's
  `_bucket`, `_sum`, `_count`, a counter's `_created` timestamp, ...).

# Example

```
use vllm_lens_store::{Role, Store, TargetKind};

let mut store = Store::default();
let target = store.add_target("vllm-0", TargetKind::Vllm, &[]);
let text = "# TYPE vllm:prompt_tokens_total counter\n\
            vllm:prompt_tokens_total{engine=\"0\"} 10\n\
            # TYPE vllm:prompt_tokens_created gauge\n\
            vllm:prompt_tokens_created{engine=\"0\"} 1.7e9\n";
store.ingest(target, text, Some(1_000));
store.ingest(target, &text.replace(" 10\n", " 25\n"), Some(16_000));
store.finish();

let id = store.find_series("vllm:prompt_tokens_total", &[("engine", "0")]).unwrap();
let series = store.series(id);
assert_eq!(series.values(), &[10.0, 25.0]);
assert_eq!(series.role(), Role::Total);
let created = store.find_series("vllm:prompt_tokens_created", &[("engine", "0")]).unwrap();
assert_eq!(store.series(created).role(), Role::Created);
assert_eq!(store.label(id, "instance"), Some("vllm-0"));
```
*/
#![deny(missing_docs)]

mod intern;
mod store;
pub mod time;

pub use intern::{Interner, Sym};
pub use store::{
    Family, FamilyId, Ingested, LabelSetId, Limits, Pushed, Role, ScrapeRecord, Series, SeriesId,
    Store, StoreWarning, Target, TargetId, TargetKind, WindowStat,
};
pub use vllm_lens_expo::MetricType;
