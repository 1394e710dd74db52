/*!
Reads a capture bundle into the series store, without touching the file
system: the shell hands over bytes (an archive, a single file) or a
[`FileSource`] that reads loose files on request.

A bundle is a zip (stored or deflate), a tar or tar.gz, a folder, a set of
loose files, or a single scrape; `.gz` members are unwrapped. An optional
`manifest.json` names targets and capture times; without it, times come from
file or folder names, from timestamps inside the text, or (last resort, with a
warning) from modification times. The format is documented in
`docs/bundle.md`.

# Brief overview

* [`load`] reads an [`Input`] under [`Options`] into a [`Loaded`] bundle:
  the store, the [`Manifest`], and a [`Diagnostic`] per problem. It is two
  halves that a shell may also run apart (the page does, in two Web
  Workers): an [`Archive`] lists and inflates members, a [`Loader`] plans
  the [`Listing`], parses each member's bytes and puts the store together.
* [`Error`] is returned only when nothing can be used: a damaged archive, a
  zip bomb, a bundle without scrapes, scrapes that cannot be put in order.
* [`Limits`] bound memory: total inflated size, compression ratio per
  member, member count, series count.
* `dcgmi dmon`, `nvidia-smi --format=csv` and `nvidia-smi dmon` output is
  mapped onto dcgm-exporter field names and units.

# Example

```
use vllm_lens_bundle::{Input, MemoryFiles, Options, load};

let mut files = MemoryFiles::default();
files.push("vllm/1767225600000.prom", b"vllm:num_requests_running 3\n".to_vec(), None);
files.push("vllm/1767225615000.prom", b"vllm:num_requests_running 5\n".to_vec(), None);
let loaded = load(Input::Files(&mut files), &Options::default())?;
let target = &loaded.store.targets()[0];
assert_eq!(target.name(), "vllm");
assert_eq!(target.sample_times(), &[1_767_225_600_000, 1_767_225_615_000]);
# Ok::<(), vllm_lens_bundle::Error>(())
```
*/
#![deny(missing_docs)]

mod container;
mod error;
mod facts;
mod gpu_dumps;
mod ingest;
mod limits;
mod load;
mod manifest;
pub mod naming;
mod plan;
mod prom_api;
mod reconcile;
mod sniff;

pub use container::{
    Archive, ContainerKind, FileInfo, FileSource, Input, Listing, Member, MemoryFiles, ReadSeek,
    is_zip,
};
pub use error::{Error, ErrorKind, human_bytes};
pub use facts::{Facts, ServedModel};
pub use limits::Limits;
pub use load::{Diagnostic, Loaded, Loader, Options, Severity, TimeSource, load};
pub use manifest::{
    Capture, Environment, MANIFEST_VERSION, Manifest, ManifestScrape, ManifestTarget,
};
pub use sniff::{Content, exposition_kind, sniff};
