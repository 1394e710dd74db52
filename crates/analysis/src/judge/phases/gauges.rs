//! The running + waiting gauges held against Little's law, window by
//! window and phase by phase (see [`crate::measure::little`]). Restarts,
//! down time and warm-up are left out: requests lost in a restart finish
//! nowhere, and a new process's first minutes fill an empty engine.

use crate::measure::little::disagree;
use crate::measure::thresholds::GAUGES_DISAGREE_WINDOWS;

use super::state::WindowState;

/// One window where the two figures disagree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Disagreement {
    /// Window index.
    pub window: usize,
    /// Running + waiting, mean of the window's scrapes (fleet).
    pub gauges: f64,
    /// Finished per second × mean e2e latency (fleet).
    pub little: f64,
}

/// The gauges against Little's law over the capture.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct GaugeCheck {
    /// Windows (outside restarts, down time and warm-up) where they
    /// disagree.
    pub windows: Vec<Disagreement>,
    /// Windows where both figures exist (outside the same).
    pub compared: usize,
    /// Phases (outside restarts and down time) whose own figures disagree.
    pub phases: Vec<PhaseDisagreement>,
}

/// A phase whose figures disagree, over its windows `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PhaseDisagreement {
    pub start: usize,
    pub end: usize,
    pub gauges: f64,
    pub little: f64,
}

impl GaugeCheck {
    /// True when the report must say the two disagree: three windows or
    /// more do, or a phase does on its whole-phase figures (which its text
    /// quotes).
    pub fn fires(&self) -> bool {
        self.windows.len() >= GAUGES_DISAGREE_WINDOWS || !self.phases.is_empty()
    }

    /// Mean of each figure (gauges, Little's) over the disagreeing windows,
    /// or over the disagreeing phases when too few windows do.
    pub fn means(&self) -> Option<(f64, f64)> {
        let pairs: Vec<(f64, f64)> = if self.windows.len() >= GAUGES_DISAGREE_WINDOWS {
            self.windows.iter().map(|d| (d.gauges, d.little)).collect()
        } else {
            self.phases.iter().map(|p| (p.gauges, p.little)).collect()
        };
        let n = pairs.len() as f64;
        (n > 0.0).then(|| {
            (
                pairs.iter().map(|p| p.0).sum::<f64>() / n,
                pairs.iter().map(|p| p.1).sum::<f64>() / n,
            )
        })
    }

    /// True when the gauges read low (stale or blind), not high (requests
    /// that never finished).
    pub fn gauges_low(&self) -> bool {
        self.means().is_some_and(|(g, l)| g < l)
    }

    /// The windows behind the figures.
    pub fn window_count(&self) -> usize {
        if self.windows.len() >= GAUGES_DISAGREE_WINDOWS {
            self.windows.len()
        } else {
            self.phases.iter().map(|p| p.end - p.start).sum()
        }
    }
}

/// Each ordinary window's two figures.
pub(crate) fn check(states: &[WindowState]) -> GaugeCheck {
    let mut out = GaugeCheck::default();
    for (w, s) in states.iter().enumerate() {
        if s.restart || s.down || s.warmup {
            continue;
        }
        let (Some(g), Some(l)) = (s.in_flight, s.little) else {
            continue;
        };
        out.compared += 1;
        if disagree(g, l, s.in_flight_se) {
            out.windows.push(Disagreement {
                window: w,
                gauges: g,
                little: l,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(g: f64, l: f64) -> WindowState {
        WindowState {
            in_flight: Some(g),
            little: Some(l),
            ..WindowState::default()
        }
    }

    #[test]
    fn three_disagreeing_windows_fire_and_restarts_do_not_count() {
        let mut s = vec![st(1.0, 13.0), st(1.2, 13.5), st(10.0, 11.0), st(0.8, 12.0)];
        let c = check(&s);
        assert_eq!(c.compared, 4);
        assert_eq!(c.windows.len(), 3);
        assert!(c.fires());
        let (g, l) = c.means().unwrap();
        assert!(
            (g - 1.0).abs() < 1e-9 && (l - 12.833).abs() < 1e-3,
            "{g} {l}"
        );
        s[3].restart = true;
        let c = check(&s);
        assert_eq!(c.windows.len(), 2);
        assert!(!c.fires());
    }
}
