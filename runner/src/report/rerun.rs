//! The command that checks a file again, and the `runner show` command that draws a diagnostic
//! it found.

/// The `runner show` command that draws a diagnostic found by `rerun` (a `runner check` command
/// line) in case `case` at block `block`.
pub fn command(rerun: &str, case: &str, block: [u32; 3]) -> String {
    // The runner as typed (`runner`, or `runner --root DIR`), then the check's own arguments.
    let (runner, rest) = rerun.split_once(" check ").unwrap_or(("runner", rerun));
    let mut words = rest.split_whitespace();
    let mut kept = vec![];
    while let Some(w) = words.next() {
        if w == "--case" || w == "--backend" {
            words.next();
        } else {
            kept.push(w);
        }
    }
    let at = match block {
        [x, 0, 0] => x.to_string(),
        [x, y, 0] => format!("{x},{y}"),
        [x, y, z] => format!("{x},{y},{z}"),
    };
    format!(
        "{runner} show {} --case {case} --block {at}",
        kept.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::command;

    #[test]
    fn the_drawing_command_keeps_the_root_before_show() {
        let rerun =
            "runner --root ../wb check puzzle-11 --kernel k.cu --case edge-1x1 --backend sim";
        assert_eq!(
            command(rerun, "edge-1x1", [3, 1, 0]),
            "runner --root ../wb show puzzle-11 --kernel k.cu --case edge-1x1 --block 3,1"
        );
        assert_eq!(
            command("runner check puzzle-02", "example", [0, 0, 0]),
            "runner show puzzle-02 --case example --block 0"
        );
    }
}
