//! Reading input files (a lockfile, covenant.toml): bounded, regular files only, and
//! remembered, so that no report is ever written over a file this process read.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The largest file read as a lockfile (or config): a mistaken or hostile path such as
/// `/dev/zero` or a huge file fails at once instead of reading until memory runs out.
pub const MAX_READ_BYTES: u64 = 256 << 20;

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
/// regular file (a symlink to one is fine) of at most [`MAX_READ_BYTES`]. A FIFO, a
/// device or a directory is refused before it is opened, so nothing blocks or reads
/// forever.
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let fail = |m: String| Error::new(format!("cannot read {what} {}: {m}", path.display()));
    let check = |meta: &fs::Metadata| -> Result<()> {
        if !meta.is_file() {
            return Err(fail(format!("it is {}, not a regular file", kind_of(meta))));
        }
        if meta.len() > MAX_READ_BYTES {
            return Err(fail(format!(
                "it is {} bytes, over the {} MiB mcp-covenant reads",
                meta.len(),
                MAX_READ_BYTES >> 20
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
    file.take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(fail(format!(
            "it grew past the {} MiB mcp-covenant reads",
            MAX_READ_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// Every file [`read_input`] read in this process: a report is never written over one.
pub static INPUTS: std::sync::Mutex<Vec<(PathBuf, fs::Metadata)>> =
    std::sync::Mutex::new(Vec::new());
