//! Text a person can read: the characters no one can see (controls, every
//! whitespace but the space, zero-width and bidirectional format characters, …),
//! shared by every machine that takes a caller's name (ship's branches and paths,
//! claim owners and claim ids).

/// The first character of `s` a person cannot see, with its character index.
pub fn first_invisible(s: &str) -> Option<(usize, char)> {
    s.chars().enumerate().find(|(_, c)| is_invisible(*c))
}

/// Control characters, every whitespace but the ASCII space, format characters
/// (zero-width, joiners, bidirectional embeddings, overrides, isolates and marks,
/// the byte-order mark, tags), fillers and variation selectors that render as
/// nothing, noncharacters and private-use characters.
pub fn is_invisible(c: char) -> bool {
    if c.is_control() || (c.is_whitespace() && c != ' ') {
        return true;
    }
    let u = u32::from(c);
    const RANGES: &[(u32, u32)] = &[
        (0x00AD, 0x00AD),    // soft hyphen
        (0x034F, 0x034F),    // combining grapheme joiner
        (0x0600, 0x0605),    // Arabic number signs (format)
        (0x061C, 0x061C),    // Arabic letter mark
        (0x06DD, 0x06DD),    // Arabic end of ayah
        (0x070F, 0x070F),    // Syriac abbreviation mark
        (0x0890, 0x0891),    // Arabic pound/piastre marks (format)
        (0x08E2, 0x08E2),    // Arabic disputed end of ayah
        (0x115F, 0x1160),    // Hangul fillers
        (0x17B4, 0x17B5),    // Khmer inherent vowels
        (0x180B, 0x180F),    // Mongolian variation selectors, vowel separator
        (0x200B, 0x200F),    // zero-width space, joiners, LRM, RLM
        (0x202A, 0x202E),    // bidi embeddings and overrides
        (0x2060, 0x206F),    // word joiner, invisible operators, isolates
        (0x2800, 0x2800),    // braille pattern blank
        (0x3164, 0x3164),    // Hangul filler
        (0xE000, 0xF8FF),    // private use
        (0xFDD0, 0xFDEF),    // noncharacters
        (0xFE00, 0xFE0F),    // variation selectors
        (0xFEFF, 0xFEFF),    // byte-order mark
        (0xFFA0, 0xFFA0),    // halfwidth Hangul filler
        (0xFFF0, 0xFFFB),    // specials, interlinear annotation
        (0x110BD, 0x110BD),  // Kaithi number sign
        (0x110CD, 0x110CD),  // Kaithi number sign above
        (0x13430, 0x1343F),  // Egyptian hieroglyph format controls
        (0x1BCA0, 0x1BCA3),  // shorthand format controls
        (0x1D173, 0x1D17A),  // musical symbol format controls
        (0xE0000, 0xE0FFF),  // tags, variation selectors supplement
        (0xF0000, 0x10FFFF), // supplementary private use
    ];
    (u & 0xFFFE) == 0xFFFE || RANGES.iter().any(|(lo, hi)| (*lo..=*hi).contains(&u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_and_zero_width_characters_are_invisible() {
        for c in [
            '\u{200B}', '\u{200D}', '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{FEFF}',
            '\t',
        ] {
            assert!(is_invisible(c), "U+{:04X}", u32::from(c));
        }
        for c in ['a', ' ', '-', '.', '@', 'é', '漢'] {
            assert!(!is_invisible(c), "{c}");
        }
        assert_eq!(first_invisible("agent\u{202E}a"), Some((5, '\u{202E}')));
        assert_eq!(first_invisible("agent-a"), None);
    }
}
