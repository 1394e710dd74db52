/*!
The metric catalogue: which family carries each logical signal in a given
bundle, whatever the vLLM release or dcgm-exporter version called it.

vLLM renames metrics between releases, exports them under OpenTelemetry
names (`vllm_` for `vllm:`), with or without `_total`, and, under
`--show-hidden-metrics-for-version`, prints old and new names side by side.
dcgm-exporter changed its host label and DCGM renamed its fields. The
catalogue hides all that: [`Catalogue::resolve`] maps every [`Signal`] to the
first candidate family present (per target, in the order of
`vllm-formulas.md` §8), says whether it was found, aliased or missing, infers
the engine era and release range ([`Era`]), removes duplicate GPU series
([`gpu`]), and lists `vllm:*` families it does not know instead of failing.

# Brief overview

* [`signals`]: the table: [`Signal`], its [`Candidate`] families, [`Unit`],
  [`Kind`] and how its series [`Aggregate`].
* [`resolve`]: [`Catalogue`], [`Resolution`], [`Status`].
* [`era`]: [`Era`], [`Version`] ranges from markers in the data.
* [`gpu`]: GPU identity `(host, UUID, GPU instance)`.
*/
#![deny(missing_docs)]

pub mod era;
pub mod gpu;
pub mod resolve;
pub mod signals;

pub use era::{Engine, Era, Version};
pub use resolve::{Catalogue, Resolution, Status, TargetChoice, canonical};
pub use signals::{Aggregate, Candidate, Kind, SIGNALS, Signal, SignalInfo, Source, Unit};
