//! No congestion control: always the line rate, no window (`cc = "none"`, no section).

use crate::transport::common::congestion::CongestionControl;
use crate::transport::common::scheme::{CcSetup, Controller};

/// No congestion control: always the line rate, no window.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCc;

impl CongestionControl for NoCc {}

/// `cc = "none"` has no parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NoCcParams;

impl Controller for NoCcParams {
    const NAME: &'static str = "none";
    type Cc = NoCc;
    fn build(&self, _: &CcSetup) -> NoCc {
        NoCc
    }
}
