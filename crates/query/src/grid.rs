//! Windows aligned to the clock.

use serde::Serialize;

/// Shortest window accepted, ms (15 s).
pub const MIN_WINDOW_MS: i64 = 15_000;
/// Longest window accepted, ms (1 h).
pub const MAX_WINDOW_MS: i64 = 3_600_000;
/// Default window, ms (1 min).
pub const DEFAULT_WINDOW_MS: i64 = 60_000;

/// Half-open windows `[start, start + width)` aligned to multiples of the
/// width since the Unix epoch, covering a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Grid {
    /// Window width, ms.
    pub width_ms: i64,
    /// Start of the first window, ms since the Unix epoch.
    pub start_ms: i64,
    /// Number of windows.
    pub count: usize,
}

/// A window width outside 15 s ..= 1 h.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadWidth(pub i64);

impl std::fmt::Display for BadWidth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "window of {} ms is outside 15 s to 1 h", self.0)
    }
}

impl Grid {
    /// The windows of width `width_ms` that cover `first_ms ..= last_ms`.
    pub fn covering(width_ms: i64, first_ms: i64, last_ms: i64) -> Result<Grid, BadWidth> {
        if !(MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&width_ms) {
            return Err(BadWidth(width_ms));
        }
        let (first, last) = (first_ms.min(last_ms), first_ms.max(last_ms));
        let start_ms = first.div_euclid(width_ms) * width_ms;
        let end = last.div_euclid(width_ms) * width_ms + width_ms;
        Ok(Grid {
            width_ms,
            start_ms,
            count: ((end - start_ms) / width_ms) as usize,
        })
    }

    /// The window holding time `t`, if any.
    pub fn index(&self, t: i64) -> Option<usize> {
        if t < self.start_ms {
            return None;
        }
        let i = ((t - self.start_ms) / self.width_ms) as usize;
        (i < self.count).then_some(i)
    }

    /// `[start, end)` of window `i`, ms.
    pub fn bounds(&self, i: usize) -> (i64, i64) {
        let start = self.start_ms + i as i64 * self.width_ms;
        (start, start + self.width_ms)
    }

    /// Iterator over window indices.
    pub fn windows(&self) -> std::ops::Range<usize> {
        0..self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_to_the_clock() {
        let g = Grid::covering(60_000, 1_763_301_600_050, 1_763_302_185_050).unwrap();
        assert_eq!(g.start_ms, 1_763_301_600_000);
        assert_eq!(g.count, 10);
        assert_eq!(g.index(1_763_301_659_999), Some(0));
        assert_eq!(g.index(1_763_301_660_000), Some(1));
        assert_eq!(g.index(1_763_301_599_999), None);
        assert_eq!(g.index(1_763_302_200_000), None);
        assert_eq!(g.bounds(9), (1_763_302_140_000, 1_763_302_200_000));
    }

    #[test]
    fn widths_are_bounded() {
        assert_eq!(Grid::covering(14_999, 0, 1), Err(BadWidth(14_999)));
        assert!(Grid::covering(3_600_001, 0, 1).is_err());
        assert_eq!(Grid::covering(15_000, 0, 0).unwrap().count, 1);
    }
}
