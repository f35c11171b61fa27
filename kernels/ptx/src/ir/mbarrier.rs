//! The `mbarrier` instructions as decoded ([`MbarOp`]): an object in shared memory counting
//! arrivals and transaction bytes per phase.

use super::types::*;

/// One decoded `mbarrier` instruction; `addr` is in `space` (shared or generic).
#[derive(Clone, Debug, PartialEq)]
pub enum MbarOp {
    Init {
        addr: Addr,
        space: Space,
        count: Src,
    },
    Arrive {
        d: Option<Slot>,
        addr: Addr,
        space: Space,
        count: Option<Src>,
        no_complete: bool,
        /// `arrive.expect_tx`: the bytes the phase also waits for, added before the arrival.
        expect_tx: Option<Src>,
    },
    /// `mbarrier.expect_tx` (`expect`: the phase waits for `bytes` more) or
    /// `mbarrier.complete_tx` (`bytes` of them have come).
    Tx {
        addr: Addr,
        space: Space,
        bytes: Src,
        expect: bool,
    },
    Wait {
        p: PSlot,
        addr: Addr,
        space: Space,
        parity: bool,
        token: Src,
    },
    Inval {
        addr: Addr,
        space: Space,
    },
    PendingCount {
        d: Slot,
        state: Src,
    },
    CpAsyncArrive {
        addr: Addr,
        space: Space,
        noinc: bool,
    },
}
