//! Checking configuration values where they are defined: the error that names a field, and the
//! range checks every section's `check` is written with. It lives in `sim/` so that each layer's
//! parameters (a transport's `GbnParams`, the switch's settings) carry their own checks beside
//! their definition, and a new scheme's section brings its checks with it.
//!
//! A section checks its fields by their names within it (`rto`); the caller places the error in
//! the scenario with [`FieldError::within`] (`recovery.gbn.rto`).

use super::units::{Rate, Time};
use std::fmt;

/// A value the scenario (or an input file) gets wrong: the dotted path of the field and what is
/// wrong with it. Displayed as one line, `field: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    /// `message` is made one line here (control characters escaped), so no error can span two
    /// lines whatever text it quotes.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: bounded(one_line(field.into()), MAX_FIELD_CHARS), message: bounded(one_line(message.into()), MAX_MESSAGE_CHARS) }
    }

    /// The error of a field checked within `section`: `rto` within `recovery.gbn` is
    /// `recovery.gbn.rto`.
    pub fn within(mut self, section: &str) -> Self {
        self.field = match (section.is_empty(), self.field.is_empty()) {
            (true, _) => self.field,
            (false, true) => section.to_string(),
            (false, false) => format!("{section}.{}", self.field),
        };
        self
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() { write!(f, "{}", self.message) } else { write!(f, "{}: {}", self.field, self.message) }
    }
}

impl std::error::Error for FieldError {}

/// What a section's check returns.
pub type Checked = Result<(), FieldError>;

/// The longest field name and message an error shows: a quoted name or value of 100 KB (a
/// node name, an unknown key) is cut in its middle, and the line says how much was left out;
/// the end, which says what is allowed, is kept.
pub const MAX_FIELD_CHARS: usize = 300;
pub const MAX_MESSAGE_CHARS: usize = 1_000;

/// `text` with its middle cut out when longer than `max` characters: the first two thirds
/// and the last third of `max` kept.
pub fn bounded(text: String, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text;
    }
    let (head, tail) = (max * 2 / 3, max / 3);
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}... ({} characters left out) ...{end}", count - head - tail)
}

/// A float as an error shows it: as written for ordinary magnitudes, in exponent form for
/// tiny and huge ones (`1e-300`, not three hundred digits).
pub fn shown_f64(v: f64) -> String {
    if v.is_finite() && v != 0.0 && (v.abs() >= 1e15 || v.abs() < 1e-6) { format!("{v:e}") } else { format!("{v}") }
}

/// Text with every control character (a newline, a NUL) written as an escape, so it stays on
/// one line; other text is unchanged.
pub fn one_line(text: String) -> String {
    if !text.chars().any(char::is_control) {
        return text;
    }
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// A path as an error message shows it: as written when it is plain text, else quoted with
/// escapes (`"a\nb"`), so a name holding a newline cannot break the one-line rule.
pub fn shown(path: &std::path::Path) -> String {
    match path.to_str() {
        Some(s) if !s.chars().any(char::is_control) && !s.is_empty() && s.trim() == s => s.to_string(),
        _ => format!("{:?}", path.as_os_str()),
    }
}

/// The shortest period of a timer that re-arms itself (retransmission timeouts, DCQCN's rate
/// and alpha timers, the PFC watchdog's window, a background source's rate draws): at most a
/// thousand expiries per simulated millisecond each. Every such timer in the schemes' papers
/// and the HPCC ns-3 configs is 1 us or longer; a picosecond timer would make a run tick for
/// hours without moving a packet.
pub const MIN_TIMER: Time = Time::from_us(1);

pub fn range_u32(field: &str, v: u32, lo: u32, hi: u32) -> Checked {
    if v < lo || v > hi {
        return Err(FieldError::new(field, format!("{v} is out of range (allowed {lo}..={hi})")));
    }
    Ok(())
}

pub fn range_u64(field: &str, v: u64, lo: u64, hi: u64) -> Checked {
    if v < lo || v > hi {
        return Err(FieldError::new(field, format!("{v} is out of range (allowed {lo}..={hi})")));
    }
    Ok(())
}

/// `lo..=hi`; NaN is out of every range.
pub fn range_f64(field: &str, v: f64, lo: f64, hi: f64) -> Checked {
    if !(v >= lo && v <= hi) {
        return Err(FieldError::new(field, format!("{} is out of range (allowed {lo}..={hi})", shown_f64(v))));
    }
    Ok(())
}

/// A share or gain in (0, 1].
pub fn fraction(field: &str, v: f64) -> Checked {
    if !(v > 0.0 && v <= 1.0) {
        return Err(FieldError::new(field, format!("{} is out of range (allowed above 0, up to 1)", shown_f64(v))));
    }
    Ok(())
}

pub fn positive_time(field: &str, t: Time) -> Checked {
    if t == Time::ZERO {
        return Err(FieldError::new(field, "must be greater than 0"));
    }
    Ok(())
}

pub fn positive_rate(field: &str, r: Rate) -> Checked {
    if r.0 == 0 {
        return Err(FieldError::new(field, "must be greater than 0"));
    }
    Ok(())
}

/// The period of a timer that re-arms itself: at least [`MIN_TIMER`].
pub fn timer(field: &str, t: Time) -> Checked {
    positive_time(field, t)?;
    if t < MIN_TIMER {
        return Err(FieldError::new(field, format!("{t} is below the shortest timer period, {MIN_TIMER} (at most 1000 expiries per simulated ms)")));
    }
    Ok(())
}

/// serde's refusal of an unknown name (`unknown field `spine`, expected one of `kind`, ...`,
/// or `unknown variant ...`) shortened to the closest known name when one is a near miss:
/// "unknown field `spine`; did you mean `spines`?". A name close to none keeps serde's list.
pub fn with_suggestion(message: &str) -> String {
    let Some((kind, rest)) = ["unknown field `", "unknown variant `"].iter().find_map(|p| message.strip_prefix(p).map(|r| (*p, r))) else {
        return message.to_string();
    };
    let Some((given, expected)) = rest.split_once('`') else { return message.to_string() };
    // `a`, `b`, `c` or `a` or `b`: the names are the quoted parts.
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match closest(given, &known) {
        Some(best) => format!("{kind}{given}`; did you mean `{best}`?"),
        None => message.to_string(),
    }
}

/// The known name nearest `given` by edit distance (case ignored), if it is near enough to be a
/// typo: at most a third of the longer name's letters differ (at least one may). Ties go to the
/// first listed.
pub fn closest<'a>(given: &str, known: &[&'a str]) -> Option<&'a str> {
    let given_lower = given.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for &name in known {
        let d = edit_distance(&given_lower, &name.to_lowercase());
        let allowed = (given.chars().count().max(name.chars().count()) / 3).max(1);
        if d <= allowed && best.map_or(true, |(b, _)| d < b) {
            best = Some((d, name));
        }
    }
    best.map(|(_, name)| name)
}

/// Levenshtein distance between two strings, by characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_close_to_a_known_one_is_named_instead_of_the_list() {
        let m = "unknown field `spine`, expected one of `kind`, `hosts_per_leaf`, `leaves`, `spines`, `link`";
        assert_eq!(with_suggestion(m), "unknown field `spine`; did you mean `spines`?");
        let v = "unknown variant `leafspine`, expected one of `leaf_spine`, `fat_tree`";
        assert_eq!(with_suggestion(v), "unknown variant `leafspine`; did you mean `leaf_spine`?");
        assert_eq!(with_suggestion("unknown field `rto_`, expected `rto`"), "unknown field `rto_`; did you mean `rto`?");
        let two = "unknown field `recovry`, expected `recovery` or `cc`";
        assert_eq!(with_suggestion(two), "unknown field `recovry`; did you mean `recovery`?");
        // Close to nothing: serde's list stays, as do other messages.
        let far = "unknown field `burst`, expected one of `link`, `profile`, `rate`";
        assert_eq!(with_suggestion(far), far);
        assert_eq!(with_suggestion("invalid type: string"), "invalid type: string");
        assert_eq!(with_suggestion("unknown field `x`, there are no fields"), "unknown field `x`, there are no fields");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(closest("DURATION", &["duration", "seed"]), Some("duration"));
        assert_eq!(closest("ab", &["xy"]), None);
    }

    #[test]
    fn errors_are_placed_within_their_section_and_stay_on_one_line() {
        let e = FieldError::new("rto", "must be greater than 0").within("recovery.gbn");
        assert_eq!(e.to_string(), "recovery.gbn.rto: must be greater than 0");
        assert_eq!(FieldError::new("", "x").within("cc.dcqcn").to_string(), "cc.dcqcn: x");
        assert_eq!(FieldError::new("a", "x").within("").to_string(), "a: x");
        assert_eq!(FieldError::new("a\nb", "c\u{0}d\re").to_string(), "a\\nb: c\\u{0}d\\re");
        assert_eq!(shown(std::path::Path::new("data/x.txt")), "data/x.txt");
        assert_eq!(shown(std::path::Path::new("we\nird")), "\"we\\nird\"");
        assert_eq!(shown(std::path::Path::new(" lead")), "\" lead\"");
    }

    #[test]
    fn ranges_refuse_their_edges_and_nan() {
        assert!(range_u32("f", 3, 3, 5).is_ok() && range_u32("f", 5, 3, 5).is_ok());
        assert_eq!(range_u32("f", 2, 3, 5).unwrap_err().to_string(), "f: 2 is out of range (allowed 3..=5)");
        assert!(range_u32("f", 6, 3, 5).is_err());
        assert!(range_u64("f", u64::MAX, 0, u64::MAX - 1).is_err());
        assert!(range_f64("f", 1.0, 0.0, 1.0).is_ok() && range_f64("f", f64::NAN, 0.0, 1.0).is_err());
        assert!(range_f64("f", f64::INFINITY, 0.0, 1.0).is_err() && range_f64("f", -0.1, 0.0, 1.0).is_err());
        assert_eq!(range_f64("f", 1e300, 0.0, 1.0).unwrap_err().message, "1e300 is out of range (allowed 0..=1)");
        assert_eq!(shown_f64(1e-300), "1e-300");
        assert_eq!(shown_f64(0.25), "0.25");
        let long = FieldError::new("x".repeat(1000), "y".repeat(5000));
        assert!(long.field.len() < 400 && long.message.len() < 1100 && long.message.contains("(4001 characters left out)"), "{long}");
        let quoted = FieldError::new("f", format!("\"{}\" is too long (at most 1024 bytes)", "x".repeat(5000)));
        assert!(quoted.message.ends_with("x\" is too long (at most 1024 bytes)"), "{quoted}");
        assert!(fraction("f", 1.0).is_ok() && fraction("f", 0.0).is_err() && fraction("f", f64::NAN).is_err() && fraction("f", 1.5).is_err());
        assert!(positive_time("f", Time(1)).is_ok() && positive_time("f", Time::ZERO).is_err());
        assert!(positive_rate("f", Rate(1)).is_ok() && positive_rate("f", Rate(0)).is_err());
        assert!(timer("f", MIN_TIMER).is_ok());
        assert_eq!(timer("f", Time(999_999)).unwrap_err().to_string(), "f: 999999ps is below the shortest timer period, 1us (at most 1000 expiries per simulated ms)");
        assert_eq!(timer("f", Time::ZERO).unwrap_err().to_string(), "f: must be greater than 0");
    }
}
