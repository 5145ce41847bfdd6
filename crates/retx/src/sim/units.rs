//! Integer simulated time (picoseconds), link rates (bits per second) and their text forms.
//!
//! Time is an integer so that every run is exact and reproducible: floating point would make
//! event order depend on rounding.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time or a duration, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * 1_000_000_000)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
    pub fn min(self, other: Time) -> Time {
        if self <= other { self } else { other }
    }
    pub fn max(self, other: Time) -> Time {
        if self >= other { self } else { other }
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}

impl fmt::Display for Time {
    /// Prints the largest unit that keeps the value an integer, so it parses back exactly.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        for (div, unit) in [(1_000_000_000_000, "s"), (1_000_000_000, "ms"), (1_000_000, "us"), (1_000, "ns")] {
            if ps != 0 && ps.is_multiple_of(div) {
                return write!(f, "{}{}", ps / div, unit);
            }
        }
        write!(f, "{}ps", ps)
    }
}

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    pub fn as_gbps_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time to put `bytes` on a wire of this rate, rounded up to the next picosecond.
    pub fn serialization(self, bytes: u64) -> Time {
        let r = self.0.max(1);
        // Packets fit 64-bit arithmetic (bytes < 2 MiB: bytes x 8e12 < 2^64), which avoids
        // a 128-bit division on the hot path.
        if bytes < 1 << 21 {
            return Time((bytes * 8_000_000_000_000).div_ceil(r));
        }
        let num = bytes as u128 * 8 * 1_000_000_000_000u128;
        Time(num.div_ceil(r as u128) as u64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (div, unit) in [(1_000_000_000_000, "Tbps"), (1_000_000_000, "Gbps"), (1_000_000, "Mbps"), (1_000, "Kbps")] {
            if b != 0 && b.is_multiple_of(div) {
                return write!(f, "{}{}", b / div, unit);
            }
        }
        write!(f, "{}bps", b)
    }
}

/// Splits "40Gbps" into (40.0, "Gbps"). The number may have a fraction ("2.5us").
fn split_number(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let num: f64 = num.replace('_', "").parse().ok()?;
    Some((num, unit.trim()))
}

fn scaled(num: f64, mult: f64) -> Option<u64> {
    let v = (num * mult).round();
    if v.is_finite() && v >= 0.0 && v <= u64::MAX as f64 { Some(v as u64) } else { None }
}

pub const RATE_HINT: &str = "a bandwidth such as \"40Gbps\" (units: bps, Kbps, Mbps, Gbps, Tbps)";
pub const TIME_HINT: &str = "a time such as \"2us\" (units: ps, ns, us, ms, s)";
pub const SIZE_HINT: &str = "a size such as \"12MB\" (units: B, KB, MB, GB, KiB, MiB, GiB)";

pub fn parse_rate(text: &str) -> Option<Rate> {
    let (num, unit) = split_number(text)?;
    let mult = match unit {
        "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        _ => return None,
    };
    scaled(num, mult).map(Rate)
}

pub fn parse_time(text: &str) -> Option<Time> {
    let (num, unit) = split_number(text)?;
    let mult = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => return None,
    };
    scaled(num, mult).map(Time)
}

pub fn parse_size(text: &str) -> Option<u64> {
    let (num, unit) = split_number(text)?;
    let mult = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    scaled(num, mult)
}

/// Prints a byte count in the largest decimal unit that keeps it an integer.
pub fn format_size(bytes: u64) -> String {
    for (div, unit) in [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")] {
        if bytes != 0 && bytes.is_multiple_of(div) {
            return format!("{}{}", bytes / div, unit);
        }
    }
    format!("{}B", bytes)
}

// Config values with units ("40Gbps", "2us", "12MB") that parse from and print back to text:
// what parameter structs of every layer hold, so that no layer needs the scenario schema.

macro_rules! unit_value {
    ($name:ident, $inner:ty, $parse:expr, $hint:expr, $show:expr, $max:expr) => {
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
                        let value = $parse(v).ok_or_else(|| E::custom(format!("{:?} is not {}", v, $hint)))?;
                        if value > $max {
                            return Err(E::custom(format!("{:?} is beyond the engine's range (at most {})", v, $show($max))));
                        }
                        Ok($name(value))
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

/// The longest time a scenario may name: 10^6 s (a run's longest duration). Sums of a few such
/// times stay far below `u64::MAX` picoseconds (1.8 x 10^7 s), so nothing derived wraps.
pub const MAX_TIME: Time = Time(1_000_000_000_000_000_000);
/// The fastest rate a scenario may name: 1 Pbps, far above any link, far below `u64::MAX`.
pub const MAX_RATE: Rate = Rate(1_000_000_000_000_000);
/// The largest size a scenario may name: 10^18 B, so that a sum over ports of sizes and
/// products with small counts are checked, not silently wrapped, long before `u64::MAX`.
pub const MAX_SIZE: u64 = 1_000_000_000_000_000_000;

unit_value!(Bw, Rate, parse_rate, RATE_HINT, |r: Rate| r.to_string(), MAX_RATE);
unit_value!(Dur, Time, parse_time, TIME_HINT, |t: Time| t.to_string(), MAX_TIME);
unit_value!(Size, u64, parse_size, SIZE_HINT, format_size, MAX_SIZE);

/// A setting a paper gives as a rule rather than a number: `"bdp"`, one bandwidth-delay
/// product of the run's network (resolved when the network is built), or a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BdpOr<T> {
    Bdp,
    Value(T),
}

impl<T: Copy> BdpOr<T> {
    /// The value, or `bdp` for `"bdp"`.
    pub fn or(self, bdp: T) -> T {
        match self {
            BdpOr::Bdp => bdp,
            BdpOr::Value(v) => v,
        }
    }
}

impl<T: Serialize> Serialize for BdpOr<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BdpOr::Bdp => s.serialize_str("bdp"),
            BdpOr::Value(v) => v.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for BdpOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw<T> {
            Value(T),
            Word(String),
        }
        match Raw::<T>::deserialize(d) {
            Ok(Raw::Value(v)) => Ok(BdpOr::Value(v)),
            Ok(Raw::Word(w)) if w == "bdp" => Ok(BdpOr::Bdp),
            Ok(Raw::Word(w)) => Err(de::Error::custom(format!("{w:?} is neither \"bdp\" nor a valid value"))),
            Err(_) => Err(de::Error::custom("expected \"bdp\" or a value")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_units_round_trip() {
        assert_eq!(parse_rate("40Gbps"), Some(Rate::gbps(40)));
        assert_eq!(parse_rate("2.5Gbps"), Some(Rate(2_500_000_000)));
        assert_eq!(parse_rate("40Gbs"), None);
        assert_eq!(parse_time("2us"), Some(Time::from_us(2)));
        assert_eq!(parse_time("0.5ms"), Some(Time::from_us(500)));
        assert_eq!(parse_time("2"), None);
        assert_eq!(parse_size("12MB"), Some(12_000_000));
        assert_eq!(parse_size("1KiB"), Some(1024));
        assert_eq!(Time::from_us(500).to_string(), "500us");
        assert_eq!(Time(1500).to_string(), "1500ps");
        assert_eq!(Rate::gbps(100).to_string(), "100Gbps");
        assert_eq!(format_size(5000), "5KB");
    }

    #[test]
    fn serialization_time_is_exact_in_picoseconds() {
        // 1 byte at 40 Gbps is 200 ps; 1086 bytes at 100 Gbps is 86.88 ns.
        assert_eq!(Rate::gbps(40).serialization(1), Time(200));
        assert_eq!(Rate::gbps(100).serialization(1086), Time(86_880));
        // Rounds up: 1 byte at 3 bps is 2.67 s.
        assert_eq!(Rate(3).serialization(1), Time(2_666_666_666_667));
        // Both sides of the 64-bit fast path agree.
        let r = Rate(40_000_000_007);
        for b in [(1 << 21) - 1, 1 << 21] {
            let exact = (b as u128 * 8_000_000_000_000).div_ceil(r.0 as u128) as u64;
            assert_eq!(r.serialization(b), Time(exact));
        }
    }

    #[test]
    fn bdp_or_reads_the_word_or_the_value_and_writes_them_back() {
        #[derive(Deserialize, Serialize, Debug, PartialEq)]
        struct T {
            size: BdpOr<Size>,
            count: BdpOr<u32>,
        }
        let t: T = toml::from_str("size = \"bdp\"\ncount = 15").unwrap();
        assert_eq!(t, T { size: BdpOr::Bdp, count: BdpOr::Value(15) });
        assert_eq!((t.size.or(Size(7)), t.count.or(3)), (Size(7), 15));
        let u: T = toml::from_str("size = \"20KB\"\ncount = \"bdp\"").unwrap();
        assert_eq!(u, T { size: BdpOr::Value(Size(20_000)), count: BdpOr::Bdp });
        assert_eq!(toml::to_string(&u).unwrap(), "size = \"20KB\"\ncount = \"bdp\"\n");
        let e = toml::from_str::<T>("size = \"bdpx\"\ncount = 1").unwrap_err().to_string();
        assert!(e.contains("neither \"bdp\""), "{e}");
        assert!(toml::from_str::<T>("size = 3.5\ncount = 1").is_err());
    }
}
