//! What one compile takes: the learner's source and its macros ([`Source`]), what it is
//! compiled for ([`Target`]: PTX for the simulator, at the architecture the source needs, or a
//! CUBIN for one GPU) and NVRTC's options for both; and what it gives ([`Compiled`]).

/// The lowest virtual architecture NVRTC 13 accepts; the simulator reads its PTX.
pub const PTX_ARCH: &str = "compute_75";
/// The architecture of a source that uses the tensor cores' tf32 or bf16 forms, `mma.sync` or
/// `ldmatrix` (compute capability 8.0): one that names `mma.h`, `wmma`, `mma.sync`, `tf32`,
/// `bf16` or `ldmatrix`.
pub const TENSOR_ARCH: &str = "compute_80";
/// The architecture of a source that uses Hopper's architecture-specific instructions, `wgmma`
/// or `setmaxnreg` (compute capability 9.0a): its PTX for the simulator is `compute_90a`, its
/// cubin on a 9.0 device `sm_90a`. NVRTC defines `__CUDA_ARCH_FEAT_SM90_ALL` for these two and
/// not for `sm_90`, so a source guards its `wgmma` path with that macro.
pub const HOPPER_ARCH: &str = "compute_90a";

/// Whether the source uses an instruction that exists only for `sm_90a`.
fn hopper_specific(code: &str) -> bool {
    ["wgmma", "setmaxnreg"].iter().any(|w| code.contains(w))
}

fn ptx_arch(code: &str) -> &'static str {
    if hopper_specific(code) {
        return HOPPER_ARCH;
    }
    let tensor = ["mma.h", "wmma", "mma.sync", "tf32", "bf16", "ldmatrix"];
    if tensor.iter().any(|w| code.contains(w)) {
        TENSOR_ARCH
    } else {
        PTX_ARCH
    }
}

/// What to compile for: PTX for the simulator, or CUBIN for one real GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Ptx,
    /// `sm_XY` for compute capability X.Y.
    Cubin {
        major: i32,
        minor: i32,
    },
}

/// One compilation's inputs: the learner's source and how to compile it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source<'a> {
    pub code: &'a str,
    /// The path shown in errors and written into `.loc`/`.file`, as the learner knows it.
    pub file: &'a str,
    pub macros: &'a [(String, String)],
}

/// A compiled module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compiled {
    Ptx(String),
    Cubin(Vec<u8>),
}

pub fn options(source: &Source<'_>, target: &Target) -> Vec<String> {
    let arch = match target {
        Target::Ptx => ptx_arch(source.code).to_string(),
        Target::Cubin { major: 9, minor: 0 } if hopper_specific(source.code) => {
            "sm_90a".to_string()
        }
        Target::Cubin { major, minor } => format!("sm_{major}{minor}"),
    };
    let mut opts = vec![
        format!("--gpu-architecture={arch}"),
        "--generate-line-info".to_string(),
        "--std=c++17".to_string(),
    ];
    opts.extend(source.macros.iter().map(|(k, v)| format!("-D{k}={v}")));
    opts.extend(
        crate::headers::include_dirs(source.code)
            .iter()
            .map(|d| format!("-I{}", d.display())),
    );
    opts
}

/// The folder NVRTC resolves the source's quoted includes against: the folder of `file` as NVRTC
/// sees it (relative names are relative to the working directory).
pub fn folder_of(file: &str) -> std::path::PathBuf {
    use std::path::Path;
    let path = Path::new(file);
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    abs.parent().map(Path::to_path_buf).unwrap_or_default()
}
