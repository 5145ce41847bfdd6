//! The boundary-value table: every numeric field of the scenario schema, read off resolved
//! scenarios (so a new section or field is in the table without an edit here), set in turn to
//! 0, 1, the largest value, one past it, a negative, NaN, the infinities and 1e400. Each value
//! is either refused on one line naming that field (or one checked against it), or accepted and
//! then built and run without a panic, within bounded time and memory.
//!
//! `RETX_BOUNDARY_TABLE=1 cargo test --release -p retx --test it boundaries -- --nocapture` prints the
//! table: per field and value, `ok` or the start of the refusal.


use crate::schema::{boundaries, leaves, names_related_field, one_line, resolved, run_case, Kind, Outcome, BASES};
use std::path::Path;
use std::time::Duration;


/// Wall-clock limit per case: the bases simulate a few hundred microseconds of a few hosts.
const LIMIT: Duration = Duration::from_secs(3);
/// The most a case may allocate above what was live before it.
const MAX_CASE_BYTES: usize = 1 << 30;

#[test]
fn every_numeric_field_at_every_boundary_is_refused_naming_it_or_runs() {
    crate::schema::quiet_panics();
    let print = std::env::var_os("RETX_BOUNDARY_TABLE").is_some();
    let mut failures = Vec::new();
    let (mut cases, mut refused, mut ran, mut fields) = (0, 0, 0, 0);
    for (base, sections) in BASES {
        let tree = resolved(base);
        for leaf in leaves(&tree) {
            if !matches!(leaf.kind, Kind::Int | Kind::Float | Kind::Time | Kind::Rate | Kind::Size) {
                continue;
            }
            if !sections.iter().any(|s| s.is_empty() || leaf.name == *s || leaf.name.starts_with(&format!("{s}.")) || leaf.name.starts_with(&format!("{s}["))) {
                continue;
            }
            fields += 1;
            let mut row = Vec::new();
            for raw in boundaries(leaf.kind) {
                cases += 1;
                let text = crate::schema::with_value(&tree, &leaf.path, raw);
                let baseline = crate::schema::reset_peak();
                let outcome = run_case(&text, Path::new("."), LIMIT);
                let peak = crate::schema::peak_above(baseline);
                let verdict = match &outcome {
                    Outcome::Refused(e) => {
                        refused += 1;
                        if !one_line(e) || !names_related_field(&leaf.name, e) {
                            failures.push(format!("{} = {raw}: refused naming another field: {e}", leaf.name));
                        }
                        e.to_string().chars().take(60).collect::<String>()
                    }
                    Outcome::Ran => {
                        ran += 1;
                        "ok".to_string()
                    }
                    Outcome::Slow { simulated_ps, duration_ps } => {
                        let rate = *simulated_ps as f64 / LIMIT.as_secs_f64();
                        if rate < crate::schema::MIN_PROGRESS_PS_PER_SECOND {
                            failures.push(format!("{} = {raw}: ticks in place: {simulated_ps} of {duration_ps} ps simulated in {LIMIT:?}", leaf.name));
                        }
                        format!("slow ({simulated_ps} of {duration_ps} ps)")
                    }
                    Outcome::Panicked(m) => {
                        failures.push(format!("{} = {raw}: panicked: {m}", leaf.name));
                        format!("PANIC {m}")
                    }
                };
                if peak > MAX_CASE_BYTES {
                    failures.push(format!("{} = {raw}: took {peak} bytes", leaf.name));
                }
                row.push(format!("{raw} -> {verdict}"));
            }
            if print {
                println!("{}\n    {}", leaf.name, row.join("\n    "));
            }
        }
    }
    println!("{fields} fields, {cases} cases: {refused} refused, {ran} ran");
    // The table covers the schema: a base that stops validating, or a walk that finds nothing,
    // would pass vacuously.
    assert!(fields >= 150 && refused > cases / 4 && ran > cases / 10, "{fields} fields, {cases} cases, {refused} refused, {ran} ran");
    assert!(failures.is_empty(), "{} of {cases} cases failed:\n{}", failures.len(), failures.join("\n"));
}
