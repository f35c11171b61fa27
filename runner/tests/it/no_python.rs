//! Once NVRTC has been found, a check starts no Python process: the wheel's library, found once
//! through Python's site-packages, is remembered in the cache. A `python3` ahead of the real one
//! on PATH records every call; the second of two checks must make none.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

#[test]
fn a_check_after_the_first_starts_no_python() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dir = std::env::temp_dir().join(format!("python-spy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let calls = dir.join("calls");
    let path = std::env::var("PATH").unwrap_or_default();
    // The spy appends a line, then runs the first other python3 on PATH (if there is one).
    let spy = dir.join("python3");
    std::fs::write(
        &spy,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nPATH='{path}' exec python3 \"$@\"\n",
            calls.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&spy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let check = || {
        let out = Command::new(env!("CARGO_BIN_EXE_runner"))
            .current_dir(root)
            .args([
                "check",
                "1",
                "--solution",
                "--case",
                "example-1",
                "--backend",
                "sim",
            ])
            .env("PATH", format!("{}:{path}", dir.display()))
            .env("NO_COLOR", "1")
            .env("WORKBOOK_STATE", "/nonexistent/state.json")
            .output()
            .expect("runner runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    check();
    let _ = std::fs::remove_file(&calls);
    check();
    let second = std::fs::read_to_string(&calls).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(second.is_empty(), "the second check ran python3: {second}");
}
