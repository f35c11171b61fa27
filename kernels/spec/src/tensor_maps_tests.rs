//! Tests of reading, evaluating and checking tensor-map declarations.

use super::*;
use crate::job::Launch;

/// A puzzle-11 job: 2 images of 10 x 12 pixels of 64 channels, 3 x 3 kernels, 96 channels out.
fn job() -> Job {
    let int = |name: &str, value| Arg::I32 {
        name: name.into(),
        value,
    };
    Job {
        kernel: "conv2d_nhwc".into(),
        launch: Launch::linear(1, 1),
        args: vec![
            Arg::Input {
                name: "input".into(),
                data: vec![0.0; 2 * 10 * 12 * 64],
            },
            Arg::Input {
                name: "weight".into(),
                data: vec![0.0; 9 * 64 * 96],
            },
            Arg::Output {
                name: "output".into(),
                len: 2 * 8 * 10 * 96,
            },
            int("batch", 2),
            int("input_rows", 10),
            int("input_cols", 12),
            int("input_channels", 64),
            int("output_channels", 96),
            int("kernel_rows", 3),
            int("kernel_cols", 3),
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 0,
    }
}

const HOPPER: &str = "input_map: input, dims {input_channels, batch * input_rows * input_cols}, box {32, 136}, swizzle 128;\
     weight_map: weight, dims {output_channels, kernel_rows * kernel_cols * input_channels}, box {16, 32}, swizzle 64;";

fn one(text: &str) -> Result<TensorMap, String> {
    let maps = parse(text)?;
    Ok(resolve(&maps, &job(), &[])
        .map_err(|e| e.to_string())?
        .remove(0))
}

#[test]
fn the_hopper_declaration_evaluates_with_the_cases_sizes() {
    let maps = resolve(&parse(HOPPER).unwrap(), &job(), &[]).unwrap();
    assert_eq!(maps.len(), 2);
    let (input, weight) = (&maps[0], &maps[1]);
    assert_eq!((input.symbol.as_str(), input.arg), ("input_map", 0));
    assert_eq!(input.dims, vec![64, 2 * 10 * 12]);
    assert_eq!(input.strides, vec![64 * 4], "dense: a pixel's 64 floats");
    assert_eq!((input.boxes.clone(), input.swizzle), (vec![32, 136], 128));
    assert_eq!((weight.arg, weight.dims.clone()), (1, vec![96, 9 * 64]));
    assert_eq!((weight.boxes.clone(), weight.swizzle), (vec![16, 32], 64));
}

#[test]
fn strides_macros_and_parentheses_are_read() {
    let m = one("m: input, dims {4, (input_cols), input_rows * batch}, box {4, 2, 1}, strides {256, 256 * input_cols}, swizzle none, type f32")
        .unwrap();
    assert_eq!(m.dims, vec![4, 12, 20]);
    assert_eq!(m.strides, vec![256, 256 * 12]);
    assert_eq!(m.swizzle, 0);
    let maps = parse("m: input, dims {W}, box {8}").unwrap();
    let with = resolve(&maps, &job(), &[("W".into(), "40".into())]).unwrap();
    assert_eq!(with[0].dims, vec![40]);
}

#[test]
fn a_map_whose_condition_fails_is_left_out_and_its_fields_unchecked() {
    let text = |cond: &str| format!("m: input, dims {{3, 640}}, box {{4, 8}}, when {cond}");
    let left = resolve(
        &parse(&text("input_channels % 32 != 0")).unwrap(),
        &job(),
        &[],
    );
    let left = left.unwrap();
    assert_eq!(
        left.len(),
        1,
        "64 channels: the map is not wanted, its global cleared"
    );
    assert!(left[0].dims.is_empty() && left[0].symbol == "m", "{left:?}");
    let e = resolve(
        &parse(&text("input_channels % 32 == 0 && batch >= 2")).unwrap(),
        &job(),
        &[],
    );
    assert!(
        e.unwrap_err().to_string().contains("strides[0]"),
        "wanted, so checked"
    );
    let e = resolve(&parse(&text("input_channels")).unwrap(), &job(), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a condition"), "{e}");
}

#[test]
fn what_the_encoder_refuses_names_the_field() {
    let refused = |text: &str, field: &str| {
        let e = one(text).unwrap_err();
        assert!(e.contains(field), "{text}: {e}");
        assert!(e.contains("map `m`"), "{e}");
    };
    refused("m: input, dims {64, 240}, box {32, 300}", "box[1] = 300");
    refused("m: input, dims {64, 240}, box {0, 8}", "box[0] = 0");
    refused(
        "m: input, dims {64, 240}, box {2, 8}",
        "box[0] = 2 is 8 bytes",
    );
    refused(
        "m: input, dims {64, 240}, box {64, 8}, swizzle 128",
        "more than the 128-byte swizzle span",
    );
    refused("m: input, dims {64, 240}, box {32}", "box has 1 entries");
    refused(
        "m: input, dims {1, 1, 1, 1, 1, 1}, box {4, 1, 1, 1, 1, 1}",
        "rank 1 to 5",
    );
    refused(
        "m: input, dims {3, 640}, box {4, 8}",
        "strides[0] (dimension 1) = 12 bytes",
    );
    refused(
        "m: input, dims {64, 240}, box {32, 8}, strides {200}",
        "strides[0]",
    );
    refused("m: input, dims {64, 241}, box {32, 8}", "reaches byte");
    refused("m: batch, dims {64}, box {32}", "not a buffer argument");
    refused("m: input, dims {64, rows}, box {32, 8}", "dims[1] = `rows`");
    refused("m: input, dims {0}, box {4}", "dims[0] = 0");
}

#[test]
fn a_declaration_that_does_not_read_says_what_to_write() {
    for (text, says) in [
        ("input, dims {4}, box {4}", "names no map"),
        ("m: input, box {4}", "needs both"),
        ("m: input, dims 4, box {4}", "a list in braces"),
        ("m: input, dims {4}, box {4}, swizzle 16", "swizzle `16`"),
        ("m: input, dims {4}, box {4}, type f16", "f32"),
        (
            "m: input, dims {4}, box {4}, fill nan",
            "`fill` is not a field",
        ),
        (
            "m: input, dims {4}, box {4}; m: weight, dims {4}, box {4}",
            "declared twice",
        ),
        ("   ", "declares no map"),
    ] {
        let e = parse(text).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
}

#[test]
fn declared_reads_the_string_and_wants_each_global() {
    let bytes = |s: &str| {
        s.bytes()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = "m: input, dims {64, 240}, box {32, 8};";
    let decl = format!(
        ".global .align 1 .b8 tensor_maps[{}] = {{{}}};\n",
        text.len() + 1,
        bytes(text)
    );
    let global = ".global .align 64 .b8 m[128];\n";
    let maps = declared(&format!("{decl}{global}"), "k.cu")
        .unwrap()
        .unwrap();
    assert_eq!(maps[0].symbol, "m");
    assert_eq!(
        declared(global, "k.cu").unwrap(),
        None,
        "no string, no maps"
    );
    let other = ".global .align 128 .b8 tensor_maps[262144];\n";
    let none = declared(other, "k.cu").unwrap();
    assert_eq!(none, None, "a global of that name, uninitialized");
    let d = declared(&decl, "k.cu").unwrap_err();
    assert_eq!(d.kind, crate::Kind::BadLaunchShape);
    assert!(
        d.message
            .contains("__device__ __align__(64) unsigned char m[128]"),
        "{}",
        d.message
    );
    let unaligned = ".global .align 16 .b8 m[128];\n";
    assert!(declared(&format!("{decl}{unaligned}"), "k.cu").is_err());
}
