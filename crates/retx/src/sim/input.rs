//! Reading input files (topologies, flow lists, CDF tables, configs) with bounds: a regular
//! file of at most a documented size, read as UTF-8. A device such as `/dev/zero` or a
//! multi-gigabyte file is refused before a byte is read, so no input can make a reader grow
//! without bound.

use std::io::Read;
use std::path::Path;

/// Largest HPCC topology file (10^5 hosts and their links are a few MB).
pub const MAX_TOPOLOGY_FILE: u64 = 64 << 20;
/// Largest HPCC flow file: 10^7 flows (the most a workload may have) of about 40 B a line.
pub const MAX_FLOW_FILE: u64 = 512 << 20;
/// Largest flow-size CDF table (the built-in ones are under 2 KB).
pub const MAX_CDF_FILE: u64 = 1 << 20;
/// Largest HPCC ns-3 config file (a few dozen `KEY value` lines).
pub const MAX_CONFIG_FILE: u64 = 1 << 20;

/// The text of a regular file of at most `cap` bytes; the error is one line for the user.
pub fn read_text(path: &Path, cap: u64) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {}", reason(&e)))?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a directory" } else { "not a regular file (a device, pipe or socket)" };
        return Err(format!("{shown} is {what}"));
    }
    if meta.len() > cap {
        return Err(format!("{shown} is {} bytes, above the limit of {cap} bytes for this kind of file", meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {}", reason(&e)))?;
    // The file may grow between the size check and the read: never read past the cap.
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {shown}: {}", reason(&e)))?;
    if bytes.len() as u64 > cap {
        return Err(format!("{shown} is above the limit of {cap} bytes for this kind of file"));
    }
    let text = String::from_utf8(bytes).map_err(|e| format!("{shown} is not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()))?;
    Ok(strip_bom(&text).to_string())
}

/// The text without a UTF-8 byte order mark at its start (editors on Windows write one).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// An I/O error without the "(os error 2)" suffix.
fn reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_oversized_files() {
        assert_eq!(read_text(Path::new("/dev/zero"), 10).unwrap_err(), "/dev/zero is not a regular file (a device, pipe or socket)");
        assert_eq!(read_text(Path::new("/"), 10).unwrap_err(), "/ is a directory");
        assert_eq!(read_text(Path::new("/no/such/file"), 10).unwrap_err(), "cannot read /no/such/file: no such file");
        let dir = std::env::temp_dir().join(format!("retx-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.txt");
        std::fs::write(&f, "\u{feff}0123456789").unwrap();
        assert_eq!(read_text(&f, 13).unwrap(), "0123456789", "the BOM (3 bytes) is dropped");
        assert!(read_text(&f, 12).unwrap_err().ends_with("is 13 bytes, above the limit of 12 bytes for this kind of file"));
        std::fs::write(&f, [b'a', 0xff]).unwrap();
        assert!(read_text(&f, 13).unwrap_err().ends_with("is not UTF-8 text (invalid byte at offset 1)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
