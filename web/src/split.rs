//! A zip bundle loaded by two Web Workers at once: the inflating worker
//! holds the file (read by the browser, never copied whole into
//! WebAssembly), lists it and inflates members in batches ([`Inflater`]);
//! the main worker parses each batch into the store as it arrives
//! ([`Loading`]) and keeps the [`Session`]. Inflating and CRC-checking
//! (a third of a load in WebAssembly) then run on the machine's second
//! core, and the main worker's memory never holds the zip. The halves are
//! the core's own `Archive` and `Loader`, which `load` drives in one loop
//! natively, so both shells read a bundle alike. `web/worker.js` carries
//! the batches between them.

use std::io::{self, Read, Seek, SeekFrom};

use vllm_lens_core::analysis::BundleMeta;
use vllm_lens_core::{Archive, Input, Limits, Listing, Loader, Options};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::{Session, js_error};

/// A `Read + Seek` over a file the browser holds: `read(position, length)`
/// (JavaScript) returns its bytes there as a `Uint8Array`, read from disk
/// in slices until the whole file is in memory, then from memory. Small
/// reads (a member's header, a small member) are served from a window of
/// 8 KiB read at once: one call into JavaScript per member, mostly.
struct JsFile {
    read: js_sys::Function,
    len: u64,
    pos: u64,
    window: Vec<u8>,
    window_at: u64,
}

const WINDOW: usize = 8 << 10;

impl JsFile {
    fn read_at(&self, at: u64, buf: &mut [u8]) -> io::Result<()> {
        let got = self
            .read
            .call2(
                &JsValue::NULL,
                &JsValue::from_f64(at as f64),
                &JsValue::from_f64(buf.len() as f64),
            )
            .map_err(|e| {
                let why = e
                    .as_string()
                    .or_else(|| js_sys::Error::from(e).message().as_string())
                    .unwrap_or_else(|| "the browser could not read the file".into());
                io::Error::other(why)
            })?;
        let array: js_sys::Uint8Array = got.dyn_into().map_err(|_| {
            io::Error::other("the browser's read returned something other than bytes")
        })?;
        if array.length() as usize != buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file changed while it was read",
            ));
        }
        array.copy_to(buf);
        Ok(())
    }
}

impl Read for JsFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.len.saturating_sub(self.pos)).min(buf.len() as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        let end = self.window_at + self.window.len() as u64;
        if self.pos >= self.window_at && self.pos < end {
            let from = (self.pos - self.window_at) as usize;
            let k = n.min(self.window.len() - from);
            buf[..k].copy_from_slice(&self.window[from..from + k]);
            self.pos += k as u64;
            return Ok(k);
        }
        if n >= WINDOW {
            self.read_at(self.pos, &mut buf[..n])?;
            self.pos += n as u64;
            return Ok(n);
        }
        let fill = (self.len - self.pos).min(WINDOW as u64) as usize;
        let mut window = std::mem::take(&mut self.window);
        window.resize(fill, 0);
        let read = self.read_at(self.pos, &mut window);
        self.window = window;
        if let Err(e) = read {
            self.window.clear();
            return Err(e);
        }
        self.window_at = self.pos;
        buf[..n].copy_from_slice(&self.window[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for JsFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let at = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match at {
            Some(at) => {
                self.pos = at;
                Ok(at)
            }
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the bundle",
            )),
        }
    }
}

/// The inflating worker's half: a zip bundle, listed, whose members it
/// inflates (and checks against their CRC-32) in the order the main
/// worker's [`Loading`] asks.
#[wasm_bindgen]
pub struct Inflater {
    archive: Archive<'static>,
    order: Vec<usize>,
    next: usize,
}

#[wasm_bindgen]
impl Inflater {
    /// Opens the zip of `size` bytes that `read(position, length)` reads
    /// (it stays in JavaScript); fails on a damaged archive or one over the
    /// loader's limits.
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, size: f64, read: js_sys::Function) -> Result<Inflater, JsError> {
        let reader = JsFile {
            read,
            len: size.max(0.0) as u64,
            pos: 0,
            window: Vec::new(),
            window_at: 0,
        };
        let input = Input::Zip {
            name: name.to_string(),
            reader: Box::new(reader),
        };
        Inflater::over(input)
    }

    /// The members, as JSON, for [`Loading::new`].
    pub fn listing(&self) -> String {
        serde_json::to_string(&self.archive.listing()).unwrap_or_default()
    }

    /// The members to inflate next, in order (from [`Loading::order`]).
    pub fn set_order(&mut self, order: Vec<u32>) {
        self.order = order.into_iter().map(|i| i as usize).collect();
        self.next = 0;
    }

    /// Inflates members of the order until `budget` bytes are gathered
    /// (at least one member), or none is left (`undefined`). Fails when
    /// the bundle goes over its size limit (the load stops there).
    pub fn next_batch(&mut self, budget: usize) -> Result<Option<Batch>, JsError> {
        if self.next >= self.order.len() {
            return Ok(None);
        }
        let mut batch = Batch::default();
        while self.next < self.order.len() && (batch.bytes.len() < budget || batch.ends.is_empty())
        {
            let index = self.order[self.next];
            self.next += 1;
            let out = &mut batch;
            self.archive
                .read(&[index], &mut |i, read| {
                    out.indices.push(i as u32);
                    match read {
                        Ok(bytes) => out.bytes.extend_from_slice(&bytes),
                        Err(message) => out.errors.push((out.ends.len(), message)),
                    }
                    out.ends.push(out.bytes.len() as u32);
                    Ok(())
                })
                .map_err(js_error)?;
        }
        Ok(Some(batch))
    }
}

impl Inflater {
    /// An inflater over any zip input (the tests read one from memory).
    fn over(input: Input<'static>) -> Result<Inflater, JsError> {
        let archive = Archive::open(input, Limits::default()).map_err(js_error)?;
        Ok(Inflater {
            archive,
            order: Vec::new(),
            next: 0,
        })
    }
}

/// Members inflated together: their indices, where each one's bytes end
/// in `bytes`, and the members that could not be read, with why.
#[wasm_bindgen]
#[derive(Default)]
pub struct Batch {
    indices: Vec<u32>,
    ends: Vec<u32>,
    bytes: Vec<u8>,
    errors: Vec<(usize, String)>,
}

#[wasm_bindgen]
impl Batch {
    /// The members' indices (moved out: call once).
    pub fn take_indices(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.indices)
    }
    /// Where each member's bytes end (moved out: call once).
    pub fn take_ends(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.ends)
    }
    /// The members' bytes, one after the other (moved out: call once).
    pub fn take_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
    /// The unreadable members as JSON `[[position in the batch, why], …]`.
    pub fn errors(&self) -> String {
        serde_json::to_string(&self.errors).unwrap_or_else(|_| "[]".into())
    }
}

/// The main worker's half: plans the [`Inflater`]'s listing and parses each
/// batch into the store as it comes, then becomes a [`Session`].
#[wasm_bindgen]
pub struct Loading {
    name: String,
    loader: Loader,
    ordered: bool,
}

#[wasm_bindgen]
impl Loading {
    /// A load of the bundle `name` listed by [`Inflater::listing`].
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, listing: &str) -> Result<Loading, JsError> {
        let listing: Listing = serde_json::from_str(listing).map_err(js_error)?;
        Ok(Loading {
            name: name.to_string(),
            loader: Loader::new(listing, &Options::default()),
            ordered: false,
        })
    }

    /// The bundle's `manifest.json`, to inflate and [`Loading::feed`]
    /// before asking for the [`Loading::order`].
    pub fn manifest_member(&self) -> Option<u32> {
        self.loader.manifest_member().map(|i| i as u32)
    }

    /// The members to inflate, in the order to feed them.
    pub fn order(&mut self) -> Vec<u32> {
        self.ordered = true;
        self.loader.order().into_iter().map(|i| i as u32).collect()
    }

    /// Parses a [`Batch`]'s members (its indices, ends, bytes and errors).
    pub fn feed(&mut self, indices: &[u32], ends: &[u32], bytes: &[u8], errors: &str) {
        let errors: Vec<(usize, String)> = serde_json::from_str(errors).unwrap_or_default();
        let mut start = 0usize;
        for (k, (&index, &end)) in indices.iter().zip(ends).enumerate() {
            let index = index as usize;
            let end = (end as usize).clamp(start, bytes.len());
            let read = match errors.iter().find(|(at, _)| *at == k) {
                Some((_, why)) => Err(why.clone()),
                None => Ok(&bytes[start..end]),
            };
            start = end;
            if !self.ordered && self.loader.manifest_member() == Some(index) {
                self.loader.manifest(read.map(<[u8]>::to_vec));
            } else {
                self.loader.file(index, read);
            }
        }
    }

    /// Finishes the load: the bundle as a [`Session`] (its digest still to
    /// set), or why nothing in it could be used.
    pub fn finish(self) -> Result<Session, JsError> {
        let loaded = self.loader.finish().map_err(js_error)?;
        let meta = BundleMeta {
            name: self.name,
            sha256: None,
        };
        Ok(Session(vllm_lens_core::Session::new(loaded, meta)))
    }
}

/// SHA-256 of a bundle fed in slices, where Web Crypto is unavailable.
#[wasm_bindgen]
#[derive(Default)]
pub struct Hasher(vllm_lens_core::Sha256);

#[wasm_bindgen]
impl Hasher {
    /// An empty digest.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Hasher {
        Hasher::default()
    }
    /// Adds a slice of the bundle.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// The digest, lowercase hex.
    pub fn hex(self) -> String {
        self.0.hex()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SAMPLE, SAMPLE_NAME};

    /// The page's protocol, without the workers: list, plan, inflate in
    /// batches of `budget` bytes, feed, finish.
    fn split_load(name: &str, zip: &'static [u8], budget: usize) -> Session {
        let input = Input::Zip {
            name: name.to_string(),
            reader: Box::new(std::io::Cursor::new(zip)),
        };
        let mut inflater = Inflater::over(input).unwrap_or_else(|_| panic!("opens"));
        let mut loading =
            Loading::new(name, &inflater.listing()).unwrap_or_else(|_| panic!("listing"));
        let mut pass = |order: Vec<u32>, loading: &mut Loading| {
            inflater.set_order(order);
            while let Some(mut b) = inflater
                .next_batch(budget)
                .unwrap_or_else(|_| panic!("inflates"))
            {
                let errors = b.errors();
                loading.feed(&b.take_indices(), &b.take_ends(), &b.take_bytes(), &errors);
            }
        };
        if let Some(m) = loading.manifest_member() {
            pass(vec![m], &mut loading);
        }
        let order = loading.order();
        pass(order, &mut loading);
        loading.finish().unwrap_or_else(|_| panic!("finishes"))
    }

    fn report_json(s: &Session) -> String {
        s.report("{}").unwrap_or_else(|_| panic!("renders")).json()
    }

    #[test]
    fn two_halves_load_a_zip_as_the_core_does() {
        let whole = Session::unhashed(SAMPLE_NAME, SAMPLE).unwrap_or_else(|_| panic!("loads"));
        for budget in [1, 64 << 10, 4 << 20] {
            let split = split_load(SAMPLE_NAME, SAMPLE, budget);
            assert_eq!(report_json(&split), report_json(&whole), "budget {budget}");
            assert_eq!(split.diagnostics(), whole.diagnostics());
        }
    }

    #[test]
    fn an_unreadable_member_travels_in_its_batch_and_the_rest_is_read() {
        // One member's deflated bytes flipped: the batch says why, in its
        // place, and the report is the core's on the same bytes.
        let mut zip = SAMPLE.to_vec();
        let at = zip.len() / 3;
        for b in &mut zip[at..at + 16] {
            *b ^= 0x5a;
        }
        let zip: &'static [u8] = Box::leak(zip.into_boxed_slice());
        let whole = Session::unhashed("flipped.zip", zip).unwrap_or_else(|_| panic!("loads"));
        let split = split_load("flipped.zip", zip, 1 << 20);
        assert!(
            whole.diagnostics().contains("cannot be"),
            "{}",
            whole.diagnostics()
        );
        assert_eq!(split.diagnostics(), whole.diagnostics());
        assert_eq!(report_json(&split), report_json(&whole));
    }
}
