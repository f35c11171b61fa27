//! The GPU worker's standard output, taken over for the kernel's `printf`.
//!
//! The CUDA driver writes what a kernel printed to the process's standard output when the device
//! synchronizes, and the worker's standard output is the pipe its answer travels on. [`stdout`]
//! keeps that pipe as [`Capture::answer`] and points file descriptor 1 at an unlinked temporary
//! file; [`Capture::text`] reads back what landed there since the last call, so a worker that
//! serves many requests hands each one only its own kernel's lines. [`stderr_during`] does the
//! same for standard error around one request (where a failed device `assert` may be printed).

#![allow(unsafe_code)] // dup2 and fflush from libc: each call says why it is sound.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsFd, AsRawFd};

pub struct Capture {
    file: File,
    /// Where the next [`Capture::text`] starts reading.
    read_to: u64,
    /// The original standard output.
    pub answer: File,
}

/// Redirects this process's standard output (descriptor 1) to a temporary file.
pub fn stdout() -> io::Result<Capture> {
    let answer = File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let path = std::env::temp_dir().join(format!("conv-workbook-printf-{}", std::process::id()));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    // SAFETY: both descriptors are open and owned by live `File`s; dup2 only makes 1 refer to the
    // temporary file (closing the old 1, whose pipe `answer` still holds open).
    if unsafe { libc::dup2(file.as_raw_fd(), 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Capture {
        file,
        read_to: 0,
        answer,
    })
}

impl Capture {
    /// What was written to standard output since the last call (or since [`stdout`]), at most
    /// `max` bytes of it; the rest of it is skipped.
    pub fn text(&mut self, max: u64) -> String {
        // SAFETY: fflush(NULL) flushes every C stdio output stream; it takes no pointer of ours.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        let mut bytes = Vec::new();
        let read = self
            .file
            .seek(SeekFrom::Start(self.read_to))
            .and_then(|_| (&mut self.file).take(max).read_to_end(&mut bytes));
        self.read_to = self.file.seek(SeekFrom::End(0)).unwrap_or(self.read_to);
        match read {
            Ok(_) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) => String::new(),
        }
    }
}

/// Runs `f` with this process's standard error (descriptor 2) pointed at a temporary file, and
/// returns what was written there, at most `max` bytes, with `f`'s result; descriptor 2 is
/// restored afterwards, so that a later panic message still reaches the parent. (The CUDA
/// driver may print a failed device `assert` on standard error.)
pub fn stderr_during<T>(max: u64, f: impl FnOnce() -> T) -> (T, String) {
    let path = std::env::temp_dir().join(format!("conv-workbook-stderr-{}", std::process::id()));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path);
    let _ = std::fs::remove_file(&path);
    let saved = io::stderr().as_fd().try_clone_to_owned();
    let (Ok(mut file), Ok(saved)) = (file, saved) else {
        return (f(), String::new());
    };
    // SAFETY: both descriptors are open and owned by live values; dup2 only makes 2 refer to the
    // temporary file, and then to the saved original again.
    if unsafe { libc::dup2(file.as_raw_fd(), 2) } < 0 {
        return (f(), String::new());
    }
    let value = f();
    // SAFETY: fflush(NULL) takes no pointer of ours; dup2 as above.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::dup2(saved.as_raw_fd(), 2);
    }
    let mut bytes = Vec::new();
    let _ = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| (&mut file).take(max).read_to_end(&mut bytes));
    (value, String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const NAME: &str = "capture::tests::c_stdio_output_is_captured_and_the_answer_stays_apart";

    /// Runs itself again as a child (the redirect must not touch the test harness's own stdout):
    /// the child prints through C's buffered stdio, as the CUDA driver does, then answers with what
    /// it captured.
    #[test]
    fn c_stdio_output_is_captured_and_the_answer_stays_apart() {
        if std::env::var_os("CAPTURE_CHILD").is_some() {
            let mut c = stdout().expect("redirects");
            // SAFETY: a NUL-terminated format whose one conversion gets an int.
            unsafe { libc::printf(c"printed by the kernel: %d\n".as_ptr(), 7) };
            let text = c.text(1 << 10);
            // SAFETY: as above.
            unsafe { libc::printf(c"second request: %d\n".as_ptr(), 8) };
            let second = c.text(1 << 10);
            write!(c.answer, "ANSWER[{text}]SECOND[{second}]").expect("answers");
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([NAME, "--exact", "--nocapture", "--test-threads", "1"])
            .env("CAPTURE_CHILD", "1")
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("ANSWER[printed by the kernel: 7\n]SECOND[second request: 8\n]"),
            "{stdout}"
        );
        assert_eq!(
            stdout.matches("printed by the kernel").count(),
            1,
            "{stdout}"
        );
    }
}
