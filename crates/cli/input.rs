//! Reading a bundle from the file system or stdin: the only file IO on the
//! way into the core.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use anyhow::Context;
use vllm_lens_core::{FileInfo, FileSource, Input, Options, Session};

/// Loads `arg` (a file, a folder, or `-` for stdin) into a session named
/// `arg`; a single file's (or stdin's) bytes are hashed for the report.
pub fn open(arg: &str, options: &Options) -> anyhow::Result<Session> {
    if arg == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading stdin")?;
        let input = Input::Bytes {
            name: "stdin",
            bytes: &bytes,
            mtime_ms: None,
        };
        let mut session = Session::load(arg, input, options)?;
        session.hash(&bytes);
        return Ok(session);
    }
    let path = Path::new(arg);
    let meta = fs::metadata(path).with_context(|| format!("{arg}: cannot be opened"))?;
    if meta.is_dir() {
        let mut source = DirFiles::scan(path, options.limits.max_members)?;
        return Ok(Session::load(arg, Input::Files(&mut source), options)?);
    }
    let cannot = || format!("{arg}: cannot be read");
    let mut head = Vec::with_capacity(4);
    fs::File::open(path)
        .and_then(|f| f.take(4).read_to_end(&mut head))
        .with_context(cannot)?;
    if vllm_lens_core::bundle::is_zip(&head) {
        // A zip is read member by member from the disk, never whole (a
        // week's bundle is 253 MB), after one pass that hashes it.
        let mut digest = vllm_lens_core::Sha256::default();
        stream_with_progress(path, meta.len(), |piece| digest.update(piece))
            .with_context(cannot)?;
        let file = fs::File::open(path).with_context(cannot)?;
        let input = Input::Zip {
            name: arg.to_string(),
            reader: Box::new(std::io::BufReader::with_capacity(64 << 10, file)),
        };
        let mut session = Session::load(arg, input, options)?;
        session.set_sha256(&digest.hex());
        return Ok(session);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    stream_with_progress(path, meta.len(), |piece| bytes.extend_from_slice(piece))
        .with_context(cannot)?;
    let input = Input::Bytes {
        name: arg,
        bytes: &bytes,
        mtime_ms: mtime_ms(&meta),
    };
    let mut session = Session::load(arg, input, options)?;
    session.hash(&bytes);
    Ok(session)
}

fn mtime_ms(meta: &fs::Metadata) -> Option<i64> {
    let modified = meta.modified().ok()?;
    let d = modified.duration_since(UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

/// A folder's files, read when the core asks for them.
struct DirFiles {
    root: PathBuf,
    files: Vec<FileInfo>,
}

impl DirFiles {
    fn scan(root: &Path, max_files: usize) -> anyhow::Result<DirFiles> {
        let mut files = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let entries = fs::read_dir(&dir)
                .with_context(|| format!("{}: cannot be listed", dir.display()))?;
            for entry in entries {
                let entry =
                    entry.with_context(|| format!("{}: cannot be listed", dir.display()))?;
                let kind = entry.file_type()?;
                let path = entry.path();
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_file() {
                    let meta = entry.metadata()?;
                    let rel = path.strip_prefix(root).unwrap_or(&path);
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    files.push(FileInfo {
                        path: rel,
                        size: meta.len(),
                        mtime_ms: mtime_ms(&meta),
                    });
                    if files.len() > max_files {
                        anyhow::bail!(
                            "{}: more than {max_files} files; raise --max-files if this is really one capture",
                            root.display()
                        );
                    }
                }
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(DirFiles {
            root: root.to_path_buf(),
            files,
        })
    }
}

impl FileSource for DirFiles {
    fn files(&self) -> &[FileInfo] {
        &self.files
    }

    fn read(&mut self, index: usize) -> Result<Vec<u8>, String> {
        let info = self.files.get(index).ok_or("no such file")?;
        fs::read(self.root.join(&info.path)).map_err(|e| format!("cannot be read: {e}"))
    }
}

/// Reads a file through `piece`, showing a progress bar on stderr for
/// large files when stderr is a terminal (silent otherwise).
fn stream_with_progress(
    path: &Path,
    size: u64,
    mut piece: impl FnMut(&[u8]),
) -> std::io::Result<()> {
    const SHOW_ABOVE: u64 = 64 << 20;
    let bar = if size > SHOW_ABOVE {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(size),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "reading {bar:30} {bytes}/{total_bytes} ({bytes_per_sec})",
        ) {
            bar.set_style(style);
        }
        Some(bar)
    } else {
        None
    };
    let mut file = fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        piece(&buf[..n]);
        if let Some(b) = &bar {
            b.inc(n as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// A spinner on stderr while a long step runs (hidden when stderr is not a
/// terminal).
pub fn spinner(message: &'static str) -> indicatif::ProgressBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}
