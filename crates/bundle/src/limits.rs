//! Bounds that keep a hostile or oversized bundle from exhausting memory.

/// Limits checked while a bundle is read. Exceeding one is an early, clear
/// error, never an out-of-memory crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum bytes after decompression, all members together (4 GiB).
    pub max_total_bytes: u64,
    /// Maximum decompressed ÷ compressed size of one member (zip-bomb
    /// guard), applied above [`Limits::ratio_floor_bytes`] (200).
    pub max_ratio: u64,
    /// Members smaller than this (decompressed) are exempt from the ratio
    /// check: tiny files compress oddly and cannot exhaust memory (1 MiB).
    pub ratio_floor_bytes: u64,
    /// Maximum number of members in an archive or folder (250,000).
    pub max_members: usize,
    /// Maximum distinct series kept in the store (500,000).
    pub max_series: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_total_bytes: 4 << 30,
            max_ratio: 200,
            ratio_floor_bytes: 1 << 20,
            max_members: 250_000,
            max_series: 500_000,
        }
    }
}

impl Limits {
    /// The most bytes a member of `compressed` bytes may inflate to.
    pub fn member_cap(&self, compressed: u64) -> u64 {
        compressed
            .saturating_mul(self.max_ratio)
            .max(self.ratio_floor_bytes)
            .min(self.max_total_bytes)
    }
}
