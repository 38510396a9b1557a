//! Files in and out. Reading input files (a lockfile, covenant.toml): bounded, regular
//! files only, and remembered, so that no report is ever written over a file this
//! process read. Writing (a lockfile, a report): atomic, and never turned against the
//! user (see [`write_atomic`]).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The largest file read as a lockfile (or config): a mistaken or hostile path such as
/// `/dev/zero` or a huge file fails at once instead of reading until memory runs out.
/// Everything bounded by "a lockfile's worth" uses it, through [`max_read_bytes`]: a
/// stdout line, an HTTP body, all list pages together, and the lockfile `snapshot`
/// writes.
pub const MAX_READ_BYTES: u64 = 256 << 20;

/// [`MAX_READ_BYTES`], or less when `MCP_COVENANT_MAX_READ_MIB` (a whole number of MiB)
/// lowers it for this process: the tests of what happens past the limit then need not
/// move 256 MiB. Hidden (no flag, no help text) and one-way: a value that would raise the
/// limit, zero, or anything but a number leaves it at 256 MiB, so the variable can only
/// make mcp-covenant refuse sooner, never accept more.
pub fn max_read_bytes() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| lowered_limit(std::env::var("MCP_COVENANT_MAX_READ_MIB").ok()))
}

fn lowered_limit(mib: Option<String>) -> u64 {
    mib.and_then(|m| m.trim().parse::<u64>().ok())
        .filter(|m| *m > 0)
        .map_or(MAX_READ_BYTES, |m| {
            MAX_READ_BYTES.min(m.saturating_mul(1 << 20))
        })
}

/// What kind of file `meta` is, for "not a regular file" messages.
pub fn kind_of(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Read an input file (`what` names it in messages: "lockfile", "config"): it must be a
/// regular file (a symlink to one is fine) of at most [`max_read_bytes`]. A FIFO, a
/// device or a directory is refused before it is opened, so nothing blocks or reads
/// forever.
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let fail = |m: String| Error::new(format!("cannot read {what} {}: {m}", path.display()));
    let max = max_read_bytes();
    let check = |meta: &fs::Metadata| -> Result<()> {
        if !meta.is_file() {
            return Err(fail(format!("it is {}, not a regular file", kind_of(meta))));
        }
        if meta.len() > max {
            return Err(fail(format!(
                "it is {} bytes, over the {} MiB mcp-covenant reads",
                meta.len(),
                max >> 20
            )));
        }
        Ok(())
    };
    check(&fs::metadata(path).map_err(|e| fail(e.to_string()))?)?;
    let file = fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    // Checked again on the open file: the path may have been swapped meanwhile.
    let meta = file.metadata().map_err(|e| fail(e.to_string()))?;
    check(&meta)?;
    INPUTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((path.to_path_buf(), meta));
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > max {
        return Err(fail(format!(
            "it grew past the {} MiB mcp-covenant reads",
            max >> 20
        )));
    }
    Ok(bytes)
}

/// Every file [`read_input`] read in this process: a report is never written over one.
pub static INPUTS: std::sync::Mutex<Vec<(PathBuf, fs::Metadata)>> =
    std::sync::Mutex::new(Vec::new());

/// How an I/O error on the written file reads (`cannot write PATH: ...`).
pub type Fail<'p> = dyn Fn(std::io::Error) -> Error + 'p;

/// Write a report (`--output`): [`write_atomic`], refused when `path` is a file this
/// command read (the baseline, `--against`, `--from`, whatever path or link reached
/// it), which the report would otherwise replace.
pub fn write_report(path: &Path, bytes: &[u8]) -> Result<()> {
    not_an_input(path)?;
    write_atomic(path, bytes)
}

/// Refused when `path` is a file this command read: checked before a command writes
/// anything else (`check --prune-ignores` rewrites covenant.toml before its report).
pub fn not_an_input(path: &Path) -> Result<()> {
    if let Ok(out) = fs::metadata(path) {
        let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((input, _)) = inputs.iter().find(|(_, m)| same_file(&out, m)) {
            return Err(Error::new(format!(
                "--output {} is {}, which this command reads; write the report to another file",
                path.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// The file a write to `path` lands in: symlinks followed to their final target (which
/// may not exist yet). A path that is or passes through `/dev` or `/proc` (`/dev/stdout`,
/// `/proc/self/fd/1`) is refused: an output is always a regular file.
fn write_target(path: &Path) -> Result<PathBuf> {
    let special = |p: &Path| {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        // `..` and symlinks in the directory resolved (`x/../../proc/self/fd/1`), when it
        // exists; the name itself is followed below, one link at a time.
        let resolved = match (abs.parent(), abs.file_name()) {
            (Some(dir), Some(name)) => fs::canonicalize(dir).map(|d| d.join(name)).ok(),
            _ => None,
        };
        [Some(abs), resolved]
            .iter()
            .flatten()
            .any(|p| p.starts_with("/dev") || p.starts_with("/proc"))
    };
    let refuse = || {
        Error::new(format!(
            "cannot write {}: it is a device or a process file, not a regular file; outputs are always regular files (without -o/--output a report goes to stdout)",
            path.display()
        ))
    };
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if special(&p) {
            return Err(refuse());
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p)
                    .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::new(format!(
        "cannot write {}: too many levels of symbolic links",
        path.display()
    )))
}

/// A name nobody can guess ahead of time (the temporary file's).
fn unpredictable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState's keys come from the operating system's random source.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish()
}

/// Write via a temporary file in the same directory and a rename, so readers see the
/// old content or the new, never a torn file.
///
/// The write cannot be turned against the user: the temporary file is created
/// exclusively under an unpredictable name (a planted file or symlink there is never
/// followed or truncated); a symlinked `path` is written to its target; a target that
/// exists and is not a regular file (a device, a FIFO, a directory, `/dev/stdout`) is
/// refused; the old file's permissions are kept.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |file, fail| file.write_all(bytes).map_err(fail))
}

/// [`write_atomic`], the content written by `fill` to the temporary file; an error from
/// `fill` removes the temporary file and leaves `path` as it was.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut fs::File, &Fail<'_>) -> Result<()>,
) -> Result<()> {
    let fail = |e: std::io::Error| Error::new(format!("cannot write {}: {e}", path.display()));
    let target = write_target(path)?;
    let mode = match fs::symlink_metadata(&target) {
        Ok(m) if m.is_file() => Some(m.permissions()),
        Ok(m) => {
            return Err(Error::new(format!(
                "cannot write {}: it is {}, not a regular file; outputs are always regular files",
                path.display(),
                kind_of(&m)
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(fail(e)),
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // A missing directory is named (the OS error says only "No such file or directory").
    match fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(Error::new(format!(
                "cannot write {}: {} is not a directory",
                path.display(),
                dir.display()
            )))
        }
        Err(_) => {
            return Err(Error::new(format!(
                "cannot write {}: the directory {} does not exist (mcp-covenant does not create directories; create it first)",
                path.display(),
                dir.display()
            )))
        }
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let (tmp, mut file) = {
        let mut attempt = 0;
        loop {
            let tmp = dir.join(format!(".{name}.{:016x}.tmp", unpredictable()));
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => {
                    attempt += 1;
                }
                Err(e) => return Err(fail(e)),
            }
        }
    };
    let result = (|| -> Result<()> {
        if let Some(mode) = mode {
            file.set_permissions(mode).map_err(fail)?;
        }
        fill(&mut file, &fail)?;
        file.sync_all().map_err(fail)?;
        drop(file);
        // A file this command read, rewritten (`check --prune-ignores` on covenant.toml),
        // is still one a report must not replace: its new inode is remembered too.
        let input = fs::metadata(&target).ok().filter(|old| {
            let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
            inputs.iter().any(|(_, m)| same_file(old, m))
        });
        fs::rename(&tmp, &target).map_err(fail)?;
        if let (Some(_), Ok(new)) = (input, fs::metadata(&target)) {
            let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
            inputs.push((path.to_path_buf(), new));
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_limit_can_be_lowered_never_raised() {
        let at = |v: &str| lowered_limit(Some(v.to_string()));
        assert_eq!(lowered_limit(None), 256 << 20);
        assert_eq!(at("4"), 4 << 20);
        assert_eq!(at(" 255 "), 255 << 20);
        for v in [
            "256",
            "257",
            "100000",
            "18446744073709551615",
            "0",
            "",
            "-1",
            "4.5",
            "4 MiB",
            "x",
        ] {
            assert_eq!(at(v), MAX_READ_BYTES, "{v:?}");
        }
    }
}
