//! The special registers a kernel reads (`%tid`, `%ctaid`, `%laneid`, `%clock`, `%nsmid`, ...).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Tid(usize),
    Ntid(usize),
    Ctaid(usize),
    Nctaid(usize),
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    LanemaskLt,
    LanemaskLe,
    LanemaskEq,
    LanemaskGe,
    LanemaskGt,
}

impl Special {
    pub fn parse(name: &str) -> Option<Special> {
        let dim = |s: &str| match s {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        let (base, d) = name
            .split_once('.')
            .map_or((name, None), |(b, d)| (b, dim(d)));
        Some(match (base, d) {
            ("%tid", Some(d)) => Special::Tid(d),
            ("%ntid", Some(d)) => Special::Ntid(d),
            ("%ctaid", Some(d)) => Special::Ctaid(d),
            ("%nctaid", Some(d)) => Special::Nctaid(d),
            ("%laneid", None) => Special::Laneid,
            ("%warpid", None) => Special::Warpid,
            ("%nwarpid", None) => Special::Nwarpid,
            ("%smid", None) => Special::Smid,
            ("%nsmid", None) => Special::Nsmid,
            ("%lanemask_lt", None) => Special::LanemaskLt,
            ("%lanemask_le", None) => Special::LanemaskLe,
            ("%lanemask_eq", None) => Special::LanemaskEq,
            ("%lanemask_ge", None) => Special::LanemaskGe,
            ("%lanemask_gt", None) => Special::LanemaskGt,
            _ => return None,
        })
    }
}
