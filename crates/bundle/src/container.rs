//! Containers: zip (stored and deflate), tar, tar.gz, a folder's or a drop's
//! loose files, a single file; `.gz` members inside any of them. Listing is
//! cheap; contents are read one member at a time under the [`Limits`].

use std::io::{Cursor, Read, Seek};

use flate2::read::MultiGzDecoder;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind};
use crate::limits::Limits;

/// A file as the shell lists it: a path relative to what the user dropped or
/// named, its size and modification time when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// Path with `/` separators, relative to the dropped folder.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, milliseconds since the Unix epoch.
    pub mtime_ms: Option<i64>,
}

/// Loose files (a folder, or several files dropped at once) that the shell
/// reads on request, so that a large folder need not sit in memory whole.
pub trait FileSource {
    /// The files, in any order.
    fn files(&self) -> &[FileInfo];
    /// The bytes of file `index` of [`FileSource::files`].
    fn read(&mut self, index: usize) -> Result<Vec<u8>, String>;
}

/// Loose files already in memory.
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles {
    infos: Vec<FileInfo>,
    data: Vec<Vec<u8>>,
}

impl MemoryFiles {
    /// Adds a file.
    pub fn push(&mut self, path: &str, bytes: Vec<u8>, mtime_ms: Option<i64>) {
        self.infos.push(FileInfo {
            path: path.replace('\\', "/"),
            size: bytes.len() as u64,
            mtime_ms,
        });
        self.data.push(bytes);
    }
}

impl FileSource for MemoryFiles {
    fn files(&self) -> &[FileInfo] {
        &self.infos
    }
    fn read(&mut self, index: usize) -> Result<Vec<u8>, String> {
        self.data
            .get_mut(index)
            .map(std::mem::take)
            .ok_or_else(|| format!("no file #{index}"))
    }
}

/// Anything a zip can be read from: bytes in memory, a file, or (in the
/// page) a reader over a buffer the browser holds.
pub trait ReadSeek: Read + Seek {}

impl<T: Read + Seek> ReadSeek for T {}

/// What a bundle is made of.
pub enum Input<'a> {
    /// One file's bytes: a zip, tar, tar.gz, a gzipped scrape or a scrape.
    Bytes {
        /// The file's name (used for messages and, for a single scrape, for
        /// its time and target).
        name: &'a str,
        /// Its content.
        bytes: &'a [u8],
        /// Its modification time, when known.
        mtime_ms: Option<i64>,
    },
    /// Loose files or a folder.
    Files(&'a mut dyn FileSource),
    /// A zip archive read through `reader`, which need not hold it in
    /// memory: members are read one at a time as they are asked for.
    Zip {
        /// The archive's name (for messages; owned, as the reader may
        /// outlive the caller's borrow).
        name: String,
        /// The archive.
        reader: Box<dyn ReadSeek + 'a>,
    },
}

/// The kind of container found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerKind {
    /// A zip archive.
    Zip,
    /// A tar archive.
    Tar,
    /// A gzipped tar archive.
    TarGz,
    /// Loose files or a folder.
    Files,
    /// A single (possibly gzipped) file.
    Single,
}

impl ContainerKind {
    /// `zip`, `tar`, `tar.gz`, `files`, `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContainerKind::Zip => "zip",
            ContainerKind::Tar => "tar",
            ContainerKind::TarGz => "tar.gz",
            ContainerKind::Files => "files",
            ContainerKind::Single => "file",
        }
    }
}

/// One member as listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Path inside the bundle.
    pub path: String,
    /// True for a folder entry (skipped).
    pub dir: bool,
    /// Declared (uncompressed) size, when the container says.
    pub size: Option<u64>,
    /// Compressed size inside the container, when it differs.
    pub compressed: Option<u64>,
    /// Modification time, when the container records one.
    pub mtime_ms: Option<i64>,
    /// True when the mtime is a zip DOS time (local time of the machine
    /// that wrote the zip, 2-second resolution).
    pub mtime_local: bool,
}

pub(crate) enum Opened<'a> {
    Zip(Box<zip::ZipArchive<Box<dyn ReadSeek + 'a>>>),
    Tar { bytes: &'a [u8], gz: bool },
    Files(&'a mut dyn FileSource),
    Single { bytes: &'a [u8] },
}

pub(crate) struct Container<'a> {
    pub kind: ContainerKind,
    pub name: String,
    pub members: Vec<Member>,
    opened: Opened<'a>,
    limits: Limits,
    total_read: u64,
    /// Small members kept while listing a tar (its manifest), so that
    /// reading them needs no second pass over the archive.
    prefetched: Vec<(usize, Vec<u8>)>,
}

/// True when `bytes` (at least the first four of a file) start a zip.
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
        || bytes.starts_with(b"PK\x05\x06")
        || bytes.starts_with(b"PK\x07\x08")
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

fn is_tar(header: &[u8]) -> bool {
    header.get(257..262) == Some(b"ustar")
}

fn corrupt(file: &str, detail: impl ToString) -> Error {
    Error::new(ErrorKind::Corrupt {
        file: file.to_string(),
        detail: detail.to_string(),
    })
}

impl<'a> Container<'a> {
    pub(crate) fn open(input: Input<'a>, limits: Limits) -> Result<Container<'a>, Error> {
        match input {
            Input::Files(source) => {
                let members: Vec<Member> = source
                    .files()
                    .iter()
                    .map(|f| Member {
                        path: f.path.clone(),
                        dir: false,
                        size: Some(f.size),
                        compressed: None,
                        mtime_ms: f.mtime_ms,
                        mtime_local: false,
                    })
                    .collect();
                check_count(members.len(), &limits)?;
                Ok(Container {
                    kind: ContainerKind::Files,
                    name: "files".into(),
                    members,
                    opened: Opened::Files(source),
                    limits,
                    total_read: 0,
                    prefetched: Vec::new(),
                })
            }
            Input::Zip { name, reader } => open_zip(&name, reader, limits),
            Input::Bytes {
                name,
                bytes,
                mtime_ms,
            } => {
                if is_zip(bytes) {
                    return open_zip(name, Box::new(Cursor::new(bytes)), limits);
                }
                let gz_tar = is_gzip(bytes) && {
                    let mut head = Vec::new();
                    let _ = MultiGzDecoder::new(bytes).take(512).read_to_end(&mut head);
                    is_tar(&head)
                };
                if gz_tar || is_tar(bytes) {
                    let mut container = Container {
                        kind: if gz_tar {
                            ContainerKind::TarGz
                        } else {
                            ContainerKind::Tar
                        },
                        name: name.to_string(),
                        members: Vec::new(),
                        opened: Opened::Tar { bytes, gz: gz_tar },
                        limits,
                        total_read: 0,
                        prefetched: Vec::new(),
                    };
                    container.list_tar()?;
                    return Ok(container);
                }
                let file = name.rsplit(['/', '\\']).next().unwrap_or(name).to_string();
                Ok(Container {
                    kind: ContainerKind::Single,
                    name: name.to_string(),
                    members: vec![Member {
                        path: file,
                        dir: false,
                        size: Some(bytes.len() as u64),
                        compressed: None,
                        mtime_ms,
                        mtime_local: false,
                    }],
                    opened: Opened::Single { bytes },
                    limits,
                    total_read: 0,
                    prefetched: Vec::new(),
                })
            }
        }
    }

    /// Reads members in `order` (indices into `members`), handing each
    /// member's decompressed bytes (or a per-member error) to `f`. Tar
    /// archives are read in archive order whatever `order` says.
    pub(crate) fn read_members(
        &mut self,
        order: &[usize],
        f: &mut dyn FnMut(usize, Result<Vec<u8>, String>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let limits = self.limits;
        let members = &self.members;
        let total_read = &mut self.total_read;
        let mut account = |i: usize, r: Result<Vec<u8>, String>| {
            account(&members[i].path, &limits, total_read, r)
        };
        match &mut self.opened {
            Opened::Zip(archive) => {
                for &i in order {
                    let result = match archive.by_index(i) {
                        Ok(entry) => {
                            let declared = entry.size();
                            let compressed = entry.compressed_size();
                            let cap = limits.member_cap(compressed);
                            if declared > cap {
                                Err(bomb_member(compressed, cap))
                            } else {
                                let mut buf = Vec::with_capacity(declared.min(cap) as usize);
                                match entry.take(cap + 1).read_to_end(&mut buf) {
                                    Ok(_) if buf.len() as u64 > cap => {
                                        Err(bomb_member(compressed, cap))
                                    }
                                    Ok(_) => Ok(buf),
                                    Err(e) => Err(format!("cannot be decompressed: {e}")),
                                }
                            }
                        }
                        Err(e) => Err(format!("cannot be read: {e}")),
                    };
                    let result = account(i, result)?;
                    f(i, result)?;
                }
                Ok(())
            }
            Opened::Files(source) => {
                for &i in order {
                    let result = source.read(i);
                    let result = account(i, result)?;
                    f(i, result)?;
                }
                Ok(())
            }
            Opened::Single { bytes } => {
                let bytes = bytes.to_vec();
                let result = account(0, Ok(bytes))?;
                f(0, result)
            }
            Opened::Tar { .. }
                if order
                    .iter()
                    .all(|i| self.prefetched.iter().any(|(p, _)| p == i)) =>
            {
                for &i in order {
                    let data = self
                        .prefetched
                        .iter()
                        .find(|(p, _)| *p == i)
                        .map(|(_, d)| d.clone())
                        .unwrap_or_default();
                    let result = account(i, Ok(data))?;
                    f(i, result)?;
                }
                Ok(())
            }
            Opened::Tar { bytes, gz } => {
                let (bytes, gz) = (*bytes, *gz);
                let wanted: Vec<bool> = {
                    let mut w = vec![false; self.members.len()];
                    for &i in order {
                        if let Some(slot) = w.get_mut(i) {
                            *slot = true;
                        }
                    }
                    w
                };
                let name = self.name.clone();
                let cap = if gz {
                    limits.member_cap(bytes.len() as u64)
                } else {
                    limits.max_total_bytes
                };
                let reader: Box<dyn Read + 'a> = if gz {
                    Box::new(MultiGzDecoder::new(bytes))
                } else {
                    Box::new(bytes)
                };
                let mut archive = tar::Archive::new(Capped::new(reader, cap));
                let entries = archive.entries().map_err(|e| corrupt(&name, e))?;
                let mut index = 0usize;
                for entry in entries {
                    let mut entry = entry.map_err(|e| tar_error(&name, gz, bytes.len(), cap, e))?;
                    if !entry.header().entry_type().is_file() {
                        continue;
                    }
                    let i = index;
                    index += 1;
                    if !wanted.get(i).copied().unwrap_or(false) {
                        continue;
                    }
                    let mut buf = Vec::with_capacity(entry.size().min(cap) as usize);
                    let result = match entry.read_to_end(&mut buf) {
                        Ok(_) => Ok(buf),
                        Err(e) => return Err(tar_error(&name, gz, bytes.len(), cap, e)),
                    };
                    let result = account(i, result)?;
                    f(i, result)?;
                }
                Ok(())
            }
        }
    }

    fn list_tar(&mut self) -> Result<(), Error> {
        let Opened::Tar { bytes, gz } = self.opened else {
            return Ok(());
        };
        let cap = if gz {
            self.limits.member_cap(bytes.len() as u64)
        } else {
            self.limits.max_total_bytes
        };
        let reader: Box<dyn Read> = if gz {
            Box::new(MultiGzDecoder::new(bytes))
        } else {
            Box::new(bytes)
        };
        let mut archive = tar::Archive::new(Capped::new(reader, cap));
        let name = self.name.clone();
        let entries = archive.entries().map_err(|e| corrupt(&name, e))?;
        let mut declared_total = 0u64;
        for entry in entries {
            let mut entry = entry.map_err(|e| tar_error(&name, gz, bytes.len(), cap, e))?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let mtime_ms = entry
                .header()
                .mtime()
                .ok()
                .and_then(|s| i64::try_from(s).ok())
                .map(|s| s * 1000);
            let path = entry
                .path()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| String::from("(unreadable name)"));
            let size = entry.size();
            let depth = path.matches('/').count();
            if path.rsplit('/').next() == Some("manifest.json") && depth <= 1 && size <= 64 << 20 {
                let mut data = Vec::new();
                if entry.read_to_end(&mut data).is_ok() {
                    self.prefetched.push((self.members.len(), data));
                }
            }
            declared_total = declared_total.saturating_add(size);
            if declared_total > self.limits.max_total_bytes {
                return Err(Error::new(ErrorKind::TooLarge {
                    file: path,
                    limit: self.limits.max_total_bytes,
                }));
            }
            self.members.push(Member {
                path,
                dir: false,
                size: Some(size),
                compressed: None,
                mtime_ms: mtime_ms.filter(|&ms| ms > 0),
                mtime_local: false,
            });
            check_count(self.members.len(), &self.limits)?;
        }
        Ok(())
    }
}

/// A container as listed: what [`crate::Loader::new`] plans from. It
/// serialises, so that a shell can list a bundle in one place and plan and
/// parse it in another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    /// The bundle's name.
    pub name: String,
    /// What it is.
    pub kind: ContainerKind,
    /// Its members, folders included, in the container's order.
    pub members: Vec<Member>,
}

/// The reading half of [`crate::load`]: opens a container, lists it, and
/// reads members (decompressed, `.gz` unwrapped, under the [`Limits`]) in
/// the order a [`crate::Loader`] asks. A shell may run the two halves
/// apart: the page inflates in one Web Worker while another parses.
pub struct Archive<'a>(Container<'a>);

impl<'a> Archive<'a> {
    /// Opens and lists `input`; fails on a damaged archive or one over the
    /// limits.
    pub fn open(input: Input<'a>, limits: Limits) -> Result<Archive<'a>, Error> {
        Container::open(input, limits).map(Archive)
    }

    /// The members, for [`crate::Loader::new`].
    pub fn listing(&self) -> Listing {
        Listing {
            name: self.0.name.clone(),
            kind: self.0.kind,
            members: self.0.members.clone(),
        }
    }

    /// Reads the members `order` names (indices into the listing), handing
    /// each one's bytes, or why it could not be read, to `f`. A tar is read
    /// in its own order whatever `order` says, in one pass; a zip, loose
    /// files and a single file in `order`, one member at a time. An error
    /// (the bundle over its size limit, a damaged tar) stops the reading.
    pub fn read(
        &mut self,
        order: &[usize],
        f: &mut dyn FnMut(usize, Result<Vec<u8>, String>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.0.read_members(order, f)
    }
}

/// Counts bytes against the total limit and unwraps `.gz` members.
fn account(
    path: &str,
    limits: &Limits,
    total_read: &mut u64,
    result: Result<Vec<u8>, String>,
) -> Result<Result<Vec<u8>, String>, Error> {
    let mut bytes = match result {
        Ok(bytes) => bytes,
        Err(e) => return Ok(Err(e)),
    };
    if is_gzip(&bytes) {
        let cap = limits.member_cap(bytes.len() as u64);
        let mut out = Vec::new();
        let read = MultiGzDecoder::new(bytes.as_slice())
            .take(cap + 1)
            .read_to_end(&mut out);
        match read {
            Ok(_) if out.len() as u64 > cap => {
                return Ok(Err(bomb_member(bytes.len() as u64, cap)));
            }
            Ok(_) => bytes = out,
            Err(e) => return Ok(Err(format!("gzip stream cannot be decompressed: {e}"))),
        }
    }
    *total_read += bytes.len() as u64;
    if *total_read > limits.max_total_bytes {
        return Err(Error::new(ErrorKind::TooLarge {
            file: path.to_string(),
            limit: limits.max_total_bytes,
        }));
    }
    Ok(Ok(bytes))
}

fn open_zip<'a>(
    name: &str,
    reader: Box<dyn ReadSeek + 'a>,
    limits: Limits,
) -> Result<Container<'a>, Error> {
    let archive = zip::ZipArchive::new(reader).map_err(|e| corrupt(name, e))?;
    check_count(archive.len(), &limits)?;
    let mut members = Vec::with_capacity(archive.len());
    let mut declared_total = 0u64;
    for i in 0..archive.len() {
        let entry = archive
            .by_index_data(i)
            .map_err(|e| corrupt(name, format!("member #{i}: {e}")))?;
        let path = match entry.name() {
            Ok(n) => n.replace('\\', "/"),
            Err(_) => String::from_utf8_lossy(entry.name_raw()).replace('\\', "/"),
        };
        let dir = entry.is_dir();
        let size = entry.size();
        let compressed = entry.compressed_size();
        if !dir {
            // A member declared beyond its inflation cap is refused when it
            // is read (that file skipped, the rest analysed); it does not
            // count towards the bundle's total.
            if size <= limits.member_cap(compressed) {
                declared_total = declared_total.saturating_add(size);
            }
            if declared_total > limits.max_total_bytes {
                return Err(Error::new(ErrorKind::TooLarge {
                    file: path,
                    limit: limits.max_total_bytes,
                }));
            }
        }
        let mtime_ms = entry.last_modified().and_then(dos_time_ms);
        members.push(Member {
            path,
            dir,
            size: Some(size),
            compressed: Some(compressed),
            mtime_ms,
            mtime_local: true,
        });
    }
    Ok(Container {
        kind: ContainerKind::Zip,
        name: name.to_string(),
        members,
        opened: Opened::Zip(Box::new(archive)),
        limits,
        total_read: 0,
        prefetched: Vec::new(),
    })
}

fn dos_time_ms(dt: zip::DateTime) -> Option<i64> {
    if dt.year() < 1981 {
        return None;
    }
    let days = crate::naming::days_from_civil(
        i64::from(dt.year()),
        i64::from(dt.month()),
        i64::from(dt.day()),
    );
    let secs = days * 86_400
        + i64::from(dt.hour()) * 3600
        + i64::from(dt.minute()) * 60
        + i64::from(dt.second());
    Some(secs * 1000)
}

fn check_count(n: usize, limits: &Limits) -> Result<(), Error> {
    if n > limits.max_members {
        return Err(Error::new(ErrorKind::TooManyMembers {
            found: n,
            limit: limits.max_members,
        }));
    }
    Ok(())
}

/// The per-member message for a member that would inflate beyond its cap.
fn bomb_member(compressed: u64, cap: u64) -> String {
    format!(
        "{} compressed would inflate beyond {} (more than real scrapes ever do: a zip bomb?)",
        crate::error::human_bytes(compressed),
        crate::error::human_bytes(cap)
    )
}

fn bomb(file: &str, compressed: u64, limit: u64) -> Error {
    Error::new(ErrorKind::Bomb {
        file: file.to_string(),
        compressed,
        limit,
    })
}

fn tar_error(name: &str, gz: bool, compressed: usize, cap: u64, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::FileTooLarge {
        if gz {
            return bomb(name, compressed as u64, cap);
        }
        return Error::new(ErrorKind::TooLarge {
            file: name.to_string(),
            limit: cap,
        });
    }
    corrupt(name, e)
}

/// A reader that fails with `FileTooLarge` past `cap` bytes.
struct Capped<R> {
    inner: R,
    remaining: u64,
}

impl<R> Capped<R> {
    fn new(inner: R, cap: u64) -> Capped<R> {
        Capped {
            inner,
            remaining: cap,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.remaining {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "decompressed size limit exceeded",
            ));
        }
        self.remaining -= n as u64;
        Ok(n)
    }
}
