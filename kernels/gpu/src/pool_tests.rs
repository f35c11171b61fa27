//! [`Worker`]'s choice of a slot, without a GPU: fake workers in a folder of their own, one a
//! listener that answers as a ready worker does, one still starting (alive, not listening yet).

use super::*;
use crate::message::{Answer, Hello, Request};
use crate::wire::{self, Frame};
use spec::job::RunOutput;
use std::os::unix::net::UnixListener;
use std::path::Path;

/// A ready worker on `sock`: says hello, then answers one request with an empty answer.
fn ready_worker(sock: &Path) -> std::thread::JoinHandle<()> {
    let listener = UnixListener::bind(sock).expect("binds");
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("a client");
        let hello = Hello {
            device: Some(Device {
                name: "fake".into(),
                major: 9,
                minor: 0,
                multiprocessors: 1,
            }),
            problem: None,
            pid: 0,
        };
        wire::write(&mut stream, &Frame::new(&hello, vec![])).expect("hello");
        let _request = wire::read(&mut stream).expect("a request");
        let answer = Answer {
            rest: RunOutput::default(),
            timing: None,
            peaks: None,
            judged: None,
            stubs: vec![],
            fatal: false,
            trace: vec![],
        };
        wire::write(&mut stream, &Frame::new(&answer, vec![])).expect("answer");
    })
}

#[test]
fn a_request_goes_to_a_ready_worker_rather_than_one_still_starting() {
    let dir = std::env::temp_dir().join(format!("conv-workbook-pool-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a folder");
    let mut w = Worker::new(PathBuf::from("/nonexistent/runner"), &["gpu-worker"]);
    w.stem = dir.join("key");
    // Slot 0, tried first: a worker still creating its CUDA context after a fault (this test's
    // own process stands for it: alive, with no socket yet).
    std::fs::write(w.path(0, "pid"), std::process::id().to_string()).expect("pid file");
    // Slot 1: the warm spare.
    let spare = ready_worker(&w.path(1, "sock"));
    let reply = w.call(&Request::Peaks, Duration::from_secs(5));
    assert!(
        reply.output.diagnostics.is_empty(),
        "{:?}",
        reply.output.diagnostics
    );
    // Had the call gone to slot 0, it would have waited there for the worker's socket and
    // ended in a `launch_error` (asserted empty above): slot 1 answering is the proof, with no
    // clock read.
    assert_eq!(w.last, 1, "the spare answered");
    spare.join().expect("the spare answered once");
    let _ = std::fs::remove_dir_all(&dir);
}
