//! The correct warp-specialized kernels of `sync/barriers.cu` (named barriers, `mbarrier`
//! rings with plain stores, with `cp.async.mbarrier.arrive.noinc` and with bulk copies
//! (`cp.async.bulk` both ways, `arrive.expect_tx`; the tensor form through maps the driver
//! encodes, one of them copied and changed with `tensormap.replace`), `elect.sync`, `redux.sync`, `dp4a`/`dp2a`/`fns`, state tokens with
//! `test_wait`, `pending_count` and `inval`, `setmaxnreg`) on the
//! device against the simulator: every output bit for bit the same, and the same as the
//! expected values. Needs a GPU of compute capability 9.0 (the source is compiled for
//! `sm_90a`), so it is `#[ignore]`d; run it with `--ignored --nocapture` on an H100.

use crate::sync;

use toolchain::nvrtc::Source;

/// The correct kernels and their block sizes.
const KERNELS: [(&str, u32); 17] = [
    ("named_ok", 128),
    ("named_aligned_ok", 128),
    ("named_same_warp_ok", 128),
    ("maxnreg_ok", 256),
    ("mbar_ring_ok", 96),
    ("mbar_cpasync_ok", 96),
    ("mbar_elected_wait_ok", 96),
    ("mbar_token_ok", 64),
    ("bulk_ring_ok", 96),
    ("bulk_wait_only_ok", 96),
    ("bulk_issuer_skips_wait_ok", 96),
    ("bulk_store_back_ok", 96),
    ("elect_ok", 64),
    ("redux_ok", 64),
    ("tma_ring_ok", 96),
    ("tma_rebuilt_ok", 96),
    ("intrin_ok", 64),
];

/// `kernel`'s output on the device, as bits.
fn device(kernel: &str, threads: u32) -> Vec<u32> {
    // Without the kernels whose constant operands ptxas itself refuses.
    let macros = [("CORRECT_ONLY".to_string(), "1".to_string())];
    let source = Source {
        code: sync::SOURCE,
        file: "barriers.cu",
        macros: &macros,
    };
    let loaded = gpu::load(&source, &sync::job(kernel, threads))
        .unwrap_or_else(|d| panic!("{kernel}: {}", d.message));
    loaded.launch_with(None).expect("the launch completes");
    let out = loaded.buffers()[1].as_ref().expect("the output buffer");
    let host = loaded.stream.clone_dtoh(out).expect("download");
    host.iter().map(|x| x.to_bits()).collect()
}

#[test]
#[ignore = "needs a CUDA GPU of compute capability 9.0: run with --ignored on an H100"]
fn warp_specialized_kernels_match_the_device_bit_for_bit() {
    let Some(dev) = gpu::probe() else {
        panic!("this test needs a CUDA GPU, and none was found");
    };
    eprintln!("device: {}", dev.arch());
    for (kernel, threads) in KERNELS {
        let on_gpu = device(kernel, threads);
        let o = sync::sim(kernel, threads);
        assert!(o.diagnostics.is_empty(), "{kernel}: {:#?}", o.diagnostics);
        let on_sim: Vec<u32> = o.outputs[0].iter().map(|x| x.to_bits()).collect();
        let differ = on_gpu.iter().zip(&on_sim).filter(|(g, s)| g != s).count();
        assert_eq!(
            differ,
            0,
            "{kernel}: {differ} of {} outputs differ",
            on_sim.len()
        );
        eprintln!("{kernel}: {} outputs bit-identical", on_sim.len());
    }
}
