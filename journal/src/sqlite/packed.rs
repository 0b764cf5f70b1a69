//! The transition record's command and context as stored: compressed per row.
//!
//! A transition record keeps the command as decided (a park observation, a ship
//! report with its git runs) and the context it was decided in; they are most of
//! a journal's bytes (a park walk's command averages ~6 KB of JSON that repeats
//! the same binding and evidence shapes). The SQLite store writes each as a
//! zstd frame, primed with a dictionary of those shapes, when that is smaller;
//! what is hashed, signed, re-decided and read back is the text, byte for byte.
//!
//! A stored value is either TEXT (short values, and every row written before
//! schema 3) or a BLOB: `cz`, the dictionary's id, then one zstd frame that
//! names its decompressed size. SQLite's columns take either; a reader takes
//! both. The dictionary is part of the format: `dict/v1.dict` is never changed
//! (a new one gets a new id, and every id stays readable), so a journal is read
//! with cairn's source alone (`zstd -D v1.dict -d` on the frame after the three
//! header bytes).

use std::cell::RefCell;
use std::sync::OnceLock;

use rusqlite::types::{Value, ValueRef};

/// Values shorter than this stay text: a frame's header and the dictionary id
/// would eat the saving.
const MIN_PACKED: usize = 256;
/// The header: `cz` and the dictionary id.
const MAGIC: &[u8; 2] = b"cz";
const DICT_V1: u8 = 1;
/// The dictionary: one park walk's contexts and commands as cairn records them.
const DICT_V1_BYTES: &[u8] = include_bytes!("dict/v1.dict");
/// zstd's level: 1, its fast strategy. The dictionary is prepared once per
/// process, and at level 1 its tables are small (a 2^13-entry hash table): at
/// the default level 3 they are sized for any input (~0.8 MB to allocate and
/// touch in a process that writes one record: measured ~1 ms and ~145 page
/// faults per CLI transition), and loading the dictionary into each record's
/// compression instead re-hashes all of it every time (a fifth of a replay
/// benchmark's fill). The dictionary, not the level, does the packing.
const LEVEL: i32 = 1;
/// The largest text a frame may claim to hold (a corrupt or hostile file never
/// makes a reader allocate more).
const MAX_TEXT: u64 = 256 << 20;

fn encoder() -> &'static zstd::dict::EncoderDictionary<'static> {
    static D: OnceLock<zstd::dict::EncoderDictionary<'static>> = OnceLock::new();
    D.get_or_init(|| zstd::dict::EncoderDictionary::copy(DICT_V1_BYTES, LEVEL))
}

fn decoder() -> &'static zstd::dict::DecoderDictionary<'static> {
    static D: OnceLock<zstd::dict::DecoderDictionary<'static>> = OnceLock::new();
    D.get_or_init(|| zstd::dict::DecoderDictionary::copy(DICT_V1_BYTES))
}

/// How many values a thread packs with the dictionary as a single-use prefix
/// before it prepares the dictionary once for all that follow. Preparing it
/// hashes every position of its 31 KB (642k of a durable `park evaluate`'s
/// 5.1M instructions, callgrind), which pays back over a batch; a prefix hashes
/// every third position for each value, so a process that packs a record or
/// two (every CLI transition) does not prepare it at all. Both write frames of
/// the same format, read back with the same dictionary (it is raw content: a
/// prefix and a dictionary mean the same bytes before the frame).
const PREFIXED_FIRST: u32 = 4;

thread_local! {
    /// One compression context per thread, made at its first packed value and
    /// reused: making one per value (allocating and initialising zstd's
    /// workspace) was most of a 1,000-transition batch's CPU.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(None) };
    /// The context of the thread's first [`PREFIXED_FIRST`] values, and their count.
    static PREFIXED: RefCell<(u32, Option<zstd::bulk::Compressor<'static>>)> =
        const { RefCell::new((0, None)) };
    /// The same for reading.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

fn compress(text: &str) -> std::io::Result<Vec<u8>> {
    let early = PREFIXED.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.0 >= PREFIXED_FIRST {
            // Its context is not needed again.
            slot.1 = None;
            return None;
        }
        slot.0 += 1;
        Some(compress_prefixed(&mut slot.1, text))
    });
    match early {
        Some(frame) => frame,
        None => compress_prepared(text),
    }
}

/// `text`'s frame, with the dictionary as the prefix of this one frame.
fn compress_prefixed(
    slot: &mut Option<zstd::bulk::Compressor<'static>>,
    text: &str,
) -> std::io::Result<Vec<u8>> {
    let c = match slot {
        Some(c) => c,
        empty => empty.insert(checksummed(zstd::bulk::Compressor::new(LEVEL)?)?),
    };
    c.context_mut()
        .ref_prefix(DICT_V1_BYTES)
        .map_err(|code| std::io::Error::other(zstd::zstd_safe::get_error_name(code)))?;
    c.compress(text.as_bytes())
}

/// `text`'s frame, with the thread's prepared dictionary.
fn compress_prepared(text: &str) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let c = match &mut *slot {
            Some(c) => c,
            empty => empty.insert(checksummed(
                zstd::bulk::Compressor::with_prepared_dictionary(encoder())?,
            )?),
        };
        c.compress(text.as_bytes())
    })
}

/// `c` writing each frame's checksum: a damaged row is an error, never other text.
fn checksummed(
    mut c: zstd::bulk::Compressor<'static>,
) -> std::io::Result<zstd::bulk::Compressor<'static>> {
    c.include_checksum(true)?;
    Ok(c)
}

fn decompress(frame: &[u8], size: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let d = match &mut *slot {
            Some(d) => d,
            empty => empty.insert(zstd::bulk::Decompressor::with_prepared_dictionary(
                decoder(),
            )?),
        };
        d.decompress(frame, size)
    })
}

/// `text` as the store writes it: a packed BLOB when that is smaller, else TEXT.
pub(crate) fn pack(text: &str) -> Value {
    if text.len() >= MIN_PACKED {
        let frame = compress(text);
        if let Ok(frame) = frame {
            if frame.len() + 3 < text.len() {
                let mut blob = Vec::with_capacity(frame.len() + 3);
                blob.extend_from_slice(MAGIC);
                blob.push(DICT_V1);
                blob.extend_from_slice(&frame);
                return Value::Blob(blob);
            }
        }
    }
    Value::Text(text.to_owned())
}

/// A stored value read back as the text it stands for.
pub(crate) fn unpack(value: ValueRef<'_>) -> Result<String, String> {
    match value {
        ValueRef::Text(t) => String::from_utf8(t.to_vec()).map_err(|e| e.to_string()),
        ValueRef::Blob(b) => {
            let frame = match b {
                [b'c', b'z', DICT_V1, frame @ ..] => frame,
                _ => return Err("a packed value with an unknown header".into()),
            };
            // Exactly one frame, nothing after it (found: a skippable frame
            // appended to a row hid bytes the text never showed).
            if zstd::zstd_safe::find_frame_compressed_size(frame).ok() != Some(frame.len()) {
                return Err("a packed value that is not exactly one frame".into());
            }
            let size = zstd::zstd_safe::get_frame_content_size(frame)
                .ok()
                .flatten()
                .filter(|n| *n <= MAX_TEXT)
                .ok_or("a packed value whose frame names no readable size")?;
            let bytes = decompress(frame, size as usize)
                .map_err(|e| format!("a packed value that does not decompress: {e}"))?;
            if bytes.len() as u64 != size {
                return Err("a packed value shorter than its frame says".into());
            }
            String::from_utf8(bytes).map_err(|e| e.to_string())
        }
        other => Err(format!("a {:?} where text is stored", other.data_type())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        let v = pack(text);
        let r = match &v {
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
            _ => unreachable!("pack writes text or a blob"),
        };
        unpack(r).expect("reads back")
    }

    #[test]
    fn text_reads_back_byte_for_byte_and_long_text_is_packed() {
        let short = r#"{"now":"x"}"#;
        assert!(matches!(pack(short), Value::Text(_)));
        assert_eq!(round(short), short);
        let long = String::from_utf8(DICT_V1_BYTES.to_vec()).expect("the dictionary is text");
        let packed = pack(&long);
        let Value::Blob(b) = &packed else {
            panic!("a long record is packed")
        };
        // The dictionary's own shapes pack to almost nothing.
        assert!(b.len() * 20 < long.len(), "{} of {}", b.len(), long.len());
        assert_eq!(round(&long), long);
        let unicode = "é🦀\u{0}".repeat(200);
        assert_eq!(round(&unicode), unicode);
    }

    /// A thread's first values are packed with the dictionary as a prefix, the
    /// rest with it prepared: both read back with the one dictionary, and both
    /// pack the dictionary's shapes to almost nothing.
    #[test]
    fn prefixed_and_prepared_frames_read_back_alike() {
        let long = String::from_utf8(DICT_V1_BYTES.to_vec()).expect("the dictionary is text");
        let text = long.replace("\"now\"", "\"then\"");
        let mut fresh = None;
        let frames = [
            compress_prefixed(&mut fresh, &text).expect("prefixed"),
            compress_prefixed(&mut fresh, &text).expect("prefixed again"),
            compress_prepared(&text).expect("prepared"),
        ];
        for frame in frames {
            assert!(
                frame.len() * 20 < text.len(),
                "{} of {}",
                frame.len(),
                text.len()
            );
            let mut blob = b"cz\x01".to_vec();
            blob.extend_from_slice(&frame);
            assert_eq!(unpack(ValueRef::Blob(&blob)).expect("reads back"), text);
        }
        // A new thread packs its first values prefixed, then prepared.
        std::thread::spawn(move || {
            for i in 0..PREFIXED_FIRST + 3 {
                let used = PREFIXED.with(|c| c.borrow().0);
                assert_eq!(used, i.min(PREFIXED_FIRST));
                assert_eq!(round(&text), text);
            }
            assert!(PREFIXED.with(|c| c.borrow().1.is_none()));
            assert!(COMPRESSOR.with(|c| c.borrow().is_some()));
        })
        .join()
        .expect("the thread packs");
    }

    proptest::proptest! {
        /// Any text reads back byte for byte, packed or not; a packed value is
        /// smaller than its text.
        #[test]
        fn any_text_reads_back(text in ".{0,2000}", repeat in 1usize..8) {
            let text = text.repeat(repeat);
            proptest::prop_assert_eq!(round(&text), text.clone());
            if let Value::Blob(b) = pack(&text) {
                proptest::prop_assert!(b.len() < text.len());
            }
        }
    }

    #[test]
    fn a_damaged_value_is_an_error_never_a_panic_or_a_huge_allocation() {
        let Value::Blob(mut b) = pack(&"{\"a\":1}".repeat(100)) else {
            panic!("packed")
        };
        assert!(unpack(ValueRef::Blob(&b[..2])).is_err());
        assert!(unpack(ValueRef::Blob(b"cz\x09rest")).is_err());
        let last = b.len() - 1;
        b[last] ^= 0xff;
        assert!(unpack(ValueRef::Blob(&b)).is_err());
        assert!(unpack(ValueRef::Integer(7)).is_err());
        // A skippable frame after the one frame: bytes the text never shows.
        let Value::Blob(mut sound) = pack(&"{\"a\":1}".repeat(100)) else {
            panic!("packed")
        };
        assert!(unpack(ValueRef::Blob(&sound)).is_ok());
        sound.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 7, 7]);
        assert!(unpack(ValueRef::Blob(&sound)).is_err());
        assert!(unpack(ValueRef::Text(&[0xff, 0xfe])).is_err());
    }
}
