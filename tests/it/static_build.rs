//! A fully static Linux binary (glibc with `-C target-feature=+crt-static`, built by
//! scripts/static-build.sh) works in an empty root: no /lib, no /etc, no /dev, no /proc.
//! It checks two lockfiles offline, captures a statically built fixture server over stdio,
//! and fails cleanly (exit 2, one error line) where it would need the system resolver:
//! an HTTP URL with a host name. Needs root for chroot; scripts/test.sh runs it as root.

/// Tests that need root: `scripts/test.sh` runs them as root and skips the module
/// (`--skip as_root::`) otherwise, saying so.
mod as_root {
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output};

    use crate::common::{stderr, stdout, tmpdir};

    /// Where scripts/static-build.sh puts its binaries (debug profile).
    fn built(name: &str) -> PathBuf {
        let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/static")
            .join(host)
            .join("debug")
            .join(name)
    }

    /// Whether an ELF executable asks for a program interpreter (the dynamic loader).
    fn has_interpreter(bytes: &[u8]) -> bool {
        let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
        assert_eq!(&bytes[..5], b"\x7fELF\x02", "a 64-bit ELF file");
        let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
        (0..phnum).any(|i| {
            let at = phoff + i * phentsize;
            u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) == 3 // PT_INTERP
        })
    }

    fn chroot(root: &Path, args: &[&str]) -> Output {
        Command::new("chroot")
            .arg(root)
            .args(args)
            .env_clear()
            // Only to find `chroot` itself; nothing in the root uses it.
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .expect("chroot runs")
    }

    #[test]
    #[ignore = "needs root (chroot) and scripts/static-build.sh; scripts/test.sh runs both as root"]
    fn a_static_binary_checks_and_captures_in_an_empty_root() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = tmpdir("static-root");
        fs::create_dir_all(root.join("bin")).unwrap();
        for name in ["mcp-covenant", "examples/fixture-server"] {
            let bin = built(name);
            let bytes = fs::read(&bin)
                .unwrap_or_else(|e| panic!("{}: {e}; run scripts/static-build.sh", bin.display()));
            assert!(!has_interpreter(&bytes), "{name} is not static");
            let to = root.join("bin").join(Path::new(name).file_name().unwrap());
            fs::copy(&bin, &to).unwrap();
        }
        for (from, to) in [
            ("golden/seed-sample/before.lock", "before.lock"),
            ("golden/seed-sample/after.lock", "after.lock"),
            ("examples/mcp-covenant.lock", "mcp-covenant.lock"),
            ("examples/demo-server.json", "demo-server.json"),
        ] {
            fs::copy(repo.join(from), root.join(to)).unwrap();
        }
        let entries: Vec<_> = fs::read_dir(&root).unwrap().flatten().collect();
        assert_eq!(entries.len(), 5, "the root holds only bin/ and four files");

        // The offline check.
        let o = chroot(
            &root,
            &[
                "/bin/mcp-covenant",
                "check",
                "--baseline",
                "/before.lock",
                "--against",
                "/after.lock",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stdout(&o).contains("[tool.removed]"), "{}", stdout(&o));

        // A stdio capture of the static fixture server: the README's main job.
        let o = chroot(
            &root,
            &[
                "/bin/mcp-covenant",
                "check",
                "--baseline",
                "/mcp-covenant.lock",
                "--",
                "/bin/fixture-server",
                "/demo-server.json",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stdout(&o).contains("4 change(s)"), "{}", stdout(&o));
        let o = chroot(
            &root,
            &[
                "/bin/mcp-covenant",
                "snapshot",
                "-o",
                "/new.lock",
                "--",
                "/bin/fixture-server",
                "/demo-server.json",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let lock = fs::read_to_string(root.join("new.lock")).unwrap();
        assert!(lock.contains("\"newtool\""), "{lock}");

        // A host name needs the system resolver (NSS), which an empty root lacks: a clean
        // error, not a panic. (An IP address needs no resolver.)
        if cfg!(feature = "http") {
            let o = chroot(
                &root,
                &[
                    "/bin/mcp-covenant",
                    "snapshot",
                    "-o",
                    "/h.lock",
                    "--timeout",
                    "5",
                    "--http",
                    "http://localhost:9/mcp",
                ],
            );
            crate::common::assert_fails_cleanly(&o, "localhost");
        }
    }
}
