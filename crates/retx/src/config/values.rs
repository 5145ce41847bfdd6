//! Config values with units ("40Gbps", "2us", "12MB") that parse from and print back to text.

use crate::sim::units::{self, Rate, Time};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

macro_rules! unit_value {
    ($name:ident, $inner:ty, $parse:expr, $hint:expr, $show:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
        pub struct $name(pub $inner);

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$show(self.0))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($hint)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).ok_or_else(|| E::custom(format!("{:?} is not {}", v, $hint)))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("{} has no unit; expected {}", v, $hint)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{} has no unit; expected {}", v, $hint)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_value!(Bw, Rate, units::parse_rate, units::RATE_HINT, |r: Rate| r.to_string());
unit_value!(Dur, Time, units::parse_time, units::TIME_HINT, |t: Time| t.to_string());
unit_value!(Size, u64, units::parse_size, units::SIZE_HINT, units::format_size);
