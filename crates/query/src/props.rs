//! Property tests of the engine's invariants (proptest).

use proptest::prelude::*;

use crate::counter::{CounterRules, KnownResets, increases};
use crate::gauge::gauge_windows;
use crate::grid::Grid;
use crate::quantile::Buckets;

/// A counter path: per scrape a time step (ms, sometimes long), an
/// increase, and whether the process restarted before it.
fn counter_path() -> impl Strategy<Value = (Vec<i64>, Vec<f64>)> {
    prop::collection::vec(
        (
            prop_oneof![9 => 14_000i64..16_000, 1 => 16_000i64..200_000],
            0.0f64..1e6,
            prop::bool::weighted(0.1),
        ),
        2..200,
    )
    .prop_map(|steps| {
        let mut t = 1_767_225_600_000i64;
        let mut v = 0.0f64;
        let mut times = Vec::new();
        let mut values = Vec::new();
        for (dt, inc, reset) in steps {
            t += dt;
            v = if reset { inc.floor() } else { v + inc.floor() };
            times.push(t);
            values.push(v);
        }
        (times, values)
    })
}

/// The reset-aware increase over a whole path, computed the simple way.
fn naive_total(values: &[f64]) -> f64 {
    values
        .windows(2)
        .map(|w| if w[1] < w[0] { w[1] } else { w[1] - w[0] })
        .sum()
}

proptest! {
    /// Window increases plus what fell in gaps sum to the total
    /// reset-aware increase, whatever the window width.
    #[test]
    fn window_increases_sum_to_the_total((times, values) in counter_path(), width_s in 15i64..=3600) {
        let grid = Grid::covering(width_s * 1000, times[0], *times.last().unwrap()).unwrap();
        let p = increases(&times, &values, &grid, &CounterRules::for_interval(15_000), &KnownResets::default(), None);
        let windows: f64 = p.windows.iter().flatten().map(|w| w.increase).sum();
        let total = naive_total(&values);
        prop_assert!((p.total - total).abs() <= 1e-9 * total.max(1.0));
        prop_assert!((windows + p.unattributed - total).abs() <= 1e-9 * total.max(1.0));
        for w in p.windows.iter().flatten() {
            prop_assert!(w.increase >= 0.0);
            prop_assert!(w.covered_ms > 0);
            prop_assert!(w.rate().is_some_and(f64::is_finite));
        }
    }

    /// Quantiles never decrease as q grows, and lie within the buckets.
    #[test]
    fn quantiles_are_monotone_in_q(
        raw in prop::collection::vec(0u32..1000, 1..20),
        bounds in prop::collection::vec(0.001f64..1000.0, 1..20),
    ) {
        let mut les: Vec<f64> = bounds;
        les.sort_by(f64::total_cmp);
        les.dedup();
        les.push(f64::INFINITY);
        let mut acc = 0.0;
        let counts: Vec<f64> = (0..les.len())
            .map(|i| {
                acc += f64::from(*raw.get(i).unwrap_or(&0));
                acc
            })
            .collect();
        let b = Buckets { les: les.clone(), counts };
        let mut last = f64::NEG_INFINITY;
        for i in 1..100 {
            let q = f64::from(i) / 100.0;
            match b.quantile(q) {
                Some(x) => {
                    prop_assert!(x.value >= last, "q={q}: {} < {last}", x.value);
                    prop_assert!(x.value >= x.lower && x.value <= x.upper);
                    last = x.value;
                }
                None => prop_assert_eq!(b.total(), Some(0.0)),
            }
        }
    }

    /// A window where nothing happened has no data: no quantile, and a
    /// gauge window without points is absent, never 0 or NaN.
    #[test]
    fn empty_windows_are_no_data(les in prop::collection::vec(0.01f64..100.0, 1..10), n in 0usize..3) {
        let mut les = les;
        les.sort_by(f64::total_cmp);
        les.dedup();
        les.push(f64::INFINITY);
        let zero = Buckets { counts: vec![0.0; les.len()], les };
        for q in [0.5, 0.95, 0.99] {
            prop_assert!(zero.quantile(q).is_none());
        }
        let grid = Grid::covering(60_000, 0, 179_999).unwrap();
        let times: Vec<i64> = (0..n as i64).map(|i| i * 15_000).collect();
        let values = vec![1.0; n];
        let g = gauge_windows(&times, &values, &grid);
        prop_assert!(g[1].is_none() && g[2].is_none());
        prop_assert_eq!(g[0].is_some(), n > 0);
    }
}
