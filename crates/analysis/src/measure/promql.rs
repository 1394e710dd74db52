//! PromQL over the capture: the expressions the alert rules and triggers
//! carry ([`Expr`], [`Selector`]) and a [`Checker`] that evaluates them at
//! each window's end with Prometheus' semantics
//! ([`vllm_lens_query::promql`]), so advice can say how often each would
//! have fired.

use std::collections::BTreeMap;

use vllm_lens_query::promql::instant;
use vllm_lens_query::{Grid, Query};
use vllm_lens_store::{SeriesId, Store};

use crate::model::SnippetCheck;
use crate::text::prom_duration;

/// The triggers' scale-down stabilisation window, ms.
pub(crate) const STABILISATION_MS: i64 = 300_000;
/// The HPA's tolerance.
pub(crate) const HPA_TOLERANCE: f64 = 0.1;

/// The series of an expression's operands: (id, instance, labels).
struct Resolved {
    a: Vec<(SeriesId, String, String)>,
    b: Vec<(SeriesId, String, String)>,
}

/// Evaluates snippets over one capture.
pub(crate) struct Checker<'a> {
    store: &'a Store,
    pub(crate) grid: Grid,
    pub(crate) replicas: usize,
}

/// A label filter: `model_name="…"` or nothing.
#[derive(Clone, Debug)]
pub(crate) struct Selector(pub(crate) Option<(String, String)>);

impl Selector {
    fn text(&self) -> String {
        match &self.0 {
            Some((k, v)) => format!(
                "{{{k}=\"{}\"}}",
                v.replace('\\', "\\\\").replace('"', "\\\"")
            ),
            None => String::new(),
        }
    }
}

/// What a snippet computes.
#[derive(Clone, Debug)]
pub(crate) enum Expr {
    /// `max by (instance) (gauge) > above`.
    MaxAbove {
        gauge: String,
        sel: Selector,
        above: f64,
    },
    /// `sum(running + waiting)`, a KEDA `AverageValue` target per replica.
    InFlight {
        running: String,
        waiting: String,
        sel: Selector,
        per_replica: f64,
    },
    /// `avg(gauge)`, a KEDA `Value` target.
    Average {
        gauge: String,
        sel: Selector,
        target: f64,
    },
}

impl Expr {
    /// The PromQL.
    pub fn promql(&self) -> String {
        match self {
            Expr::MaxAbove { gauge, sel, above } => {
                format!(
                    "max by (instance) ({gauge}{}) > {}",
                    sel.text(),
                    fmt(*above)
                )
            }
            Expr::InFlight {
                running,
                waiting,
                sel,
                ..
            } => {
                let s = sel.text();
                format!("sum({running}{s} + {waiting}{s})")
            }
            Expr::Average { gauge, sel, .. } => format!("avg({gauge}{})", sel.text()),
        }
    }
}

/// A number as PromQL and YAML read it.
pub(crate) fn fmt(v: f64) -> String {
    let s = format!("{v}");
    if s.contains('e') {
        format!("{v:.6}")
    } else {
        s
    }
}

/// A YAML single-quoted scalar.
pub(crate) fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl<'a> Checker<'a> {
    pub fn new(store: &'a Store, q: &Query<'_>, replicas: usize) -> Checker<'a> {
        Checker {
            store,
            grid: *q.grid(),
            replicas: replicas.max(1),
        }
    }

    fn series(&self, name: &str, sel: &Selector) -> Vec<SeriesId> {
        (0..self.store.all_series().len() as u32)
            .map(SeriesId)
            .filter(|&sid| self.store.series_name(sid) == name)
            .filter(|&sid| match &sel.0 {
                Some((k, v)) => self.store.label(sid, k) == Some(v.as_str()),
                None => true,
            })
            .collect()
    }

    fn instance(&self, sid: SeriesId) -> String {
        self.store.label(sid, "instance").unwrap_or("").to_string()
    }

    /// The labels of a series without the name, as a key for `+`.
    fn label_key(&self, sid: SeriesId) -> String {
        self.store
            .labels(sid)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The series an expression reads, resolved once: (first operand,
    /// second operand), each with its instance and label key.
    fn resolve(&self, e: &Expr) -> Resolved {
        let with_keys = |ids: Vec<SeriesId>| -> Vec<(SeriesId, String, String)> {
            ids.into_iter()
                .map(|sid| (sid, self.instance(sid), self.label_key(sid)))
                .collect()
        };
        let (a, b) = match e {
            Expr::MaxAbove { gauge, sel, .. } | Expr::Average { gauge, sel, .. } => {
                (self.series(gauge, sel), Vec::new())
            }
            Expr::InFlight {
                running,
                waiting,
                sel,
                ..
            } => (self.series(running, sel), self.series(waiting, sel)),
        };
        Resolved {
            a: with_keys(a),
            b: with_keys(b),
        }
    }

    /// The value of an expression at `t`: per instance for alerts (only
    /// where it holds), one value for triggers.
    fn eval(&self, e: &Expr, r: &Resolved, t: i64) -> BTreeMap<String, f64> {
        let at = |sid: SeriesId| {
            let s = self.store.series(sid);
            instant(s.times(), s.values(), t)
        };
        match e {
            Expr::MaxAbove { above, .. } => {
                let mut out: BTreeMap<String, f64> = BTreeMap::new();
                for (sid, instance, _) in &r.a {
                    if let Some(v) = at(*sid) {
                        let slot = out.entry(instance.clone()).or_insert(f64::NEG_INFINITY);
                        *slot = slot.max(v);
                    }
                }
                out.retain(|_, v| *v > *above);
                out
            }
            Expr::InFlight { .. } => {
                let waiting: BTreeMap<&str, f64> =
                    r.b.iter()
                        .filter_map(|(sid, _, key)| at(*sid).map(|v| (key.as_str(), v)))
                        .collect();
                let mut total = None;
                for (sid, _, key) in &r.a {
                    if let (Some(run), Some(wait)) = (at(*sid), waiting.get(key.as_str())) {
                        *total.get_or_insert(0.0) += run + wait;
                    }
                }
                total.map(|v| (String::new(), v)).into_iter().collect()
            }
            Expr::Average { .. } => {
                let v: Vec<f64> = r.a.iter().filter_map(|(sid, _, _)| at(*sid)).collect();
                if v.is_empty() {
                    BTreeMap::new()
                } else {
                    [(String::new(), v.iter().sum::<f64>() / v.len() as f64)]
                        .into_iter()
                        .collect()
                }
            }
        }
    }

    /// The evaluation times: each window's end.
    fn times(&self) -> Vec<i64> {
        (0..self.grid.count)
            .map(|w| self.grid.bounds(w).1)
            .collect()
    }

    /// An alert rule's firing evaluations.
    pub(crate) fn alert(&self, e: &Expr, for_ms: i64) -> SnippetCheck {
        let times = self.times();
        let mut active: BTreeMap<String, i64> = BTreeMap::new();
        let mut fired = Vec::new();
        let r = self.resolve(e);
        for &t in &times {
            let holds = self.eval(e, &r, t);
            active.retain(|k, _| holds.contains_key(k));
            for k in holds.keys() {
                active.entry(k.clone()).or_insert(t);
            }
            if active.values().any(|&since| t - since >= for_ms) {
                fired.push(t);
            }
        }
        SnippetCheck {
            windows_fired: fired.len(),
            windows_total: times.len(),
            fired_at: fired,
            method: format!(
                "expr evaluated at each window's end (every {}) with Prometheus 2.42's rate and 5-minute lookback; fired when it held for {} (for:)",
                prom_duration(self.grid.width_ms),
                prom_duration(for_ms)
            ),
        }
    }

    /// The replicas an HPA would ask for at each evaluation.
    fn desired(&self, e: &Expr) -> Vec<(i64, Option<u64>)> {
        let r = self.replicas as f64;
        let ids = self.resolve(e);
        self.times()
            .into_iter()
            .map(|t| {
                let v = self.eval(e, &ids, t).values().next().copied();
                let d = v.map(|m| {
                    let (ratio, want) = match e {
                        Expr::InFlight { per_replica, .. } => {
                            ((m / r) / per_replica, (m / per_replica).ceil())
                        }
                        Expr::Average { target, .. } => (m / target, (r * m / target).ceil()),
                        _ => (1.0, r),
                    };
                    if (ratio - 1.0).abs() <= HPA_TOLERANCE {
                        self.replicas as u64
                    } else {
                        want.max(1.0) as u64
                    }
                });
                (t, d)
            })
            .collect()
    }

    /// A trigger's scale-outs.
    pub(crate) fn trigger(&self, e: &Expr) -> (SnippetCheck, u64) {
        let d = self.desired(e);
        let mut fired = Vec::new();
        let mut most = 0;
        for (i, &(t, _)) in d.iter().enumerate() {
            // Scale-down stabilisation: the highest recommendation of the
            // last five minutes wins.
            let held = d[..=i]
                .iter()
                .filter(|(u, _)| *u > t - STABILISATION_MS)
                .filter_map(|(_, x)| *x)
                .max();
            if let Some(h) = held {
                most = most.max(h);
                if h > self.replicas as u64 {
                    fired.push(t);
                }
            }
        }
        (
            SnippetCheck {
                windows_fired: fired.len(),
                windows_total: d.len(),
                fired_at: fired,
                method: format!(
                    "query evaluated at each window's end (every {}) as an instant query; replicas asked for by the HPA formula (10 % tolerance) held for the 5-minute scale-down stabilisation; fired when more than the {} in the capture",
                    prom_duration(self.grid.width_ms),
                    crate::text::plural(self.replicas, "replica", "replicas")
                ),
            },
            most,
        )
    }
}
