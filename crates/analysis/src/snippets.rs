//! Ready-to-paste Prometheus alert rules and KEDA triggers, each written
//! with the metric names this server exports and evaluated over the
//! capture by the tool's own engine with Prometheus' semantics
//! ([`vllm_lens_query::promql`]), so the report can say how often each
//! would have fired.
//!
//! - An alert **fired** at an evaluation when its `expr` held at every
//!   evaluation for its `for:` duration (Prometheus' pending → firing).
//! - A trigger **fired** when the replicas it asks for exceed the replicas
//!   in the capture: the HPA formula with its 10 % tolerance
//!   (`AverageValue`: ⌈total ÷ target⌉; `Value`: ⌈replicas × value ÷
//!   target⌉), held for the five-minute scale-down stabilisation window.
//!
//! Evaluations happen at each window's end, the rule group's `interval`
//! being the window width.

use std::collections::BTreeMap;

use vllm_lens_catalog::Signal;
use vllm_lens_query::promql::instant;
use vllm_lens_query::{Grid, Query};
use vllm_lens_store::{SeriesId, Store};

use crate::analyses::Ctx;
use crate::model::{Snippet, SnippetCheck};
use crate::text::num;

/// The alerts' `for:`, ms.
pub(crate) const FOR_MS: i64 = 120_000;
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
    grid: Grid,
    replicas: usize,
}

/// A label filter: `model_name="…"` or nothing.
#[derive(Clone, Debug)]
pub(crate) struct Selector(Option<(String, String)>);

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
fn fmt(v: f64) -> String {
    let s = format!("{v}");
    if s.contains('e') {
        format!("{v:.6}")
    } else {
        s
    }
}

/// A YAML single-quoted scalar.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A duration as Prometheus writes it.
pub(crate) fn prom_duration(ms: i64) -> String {
    if ms % 3_600_000 == 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms % 60_000 == 0 {
        format!("{}m", ms / 60_000)
    } else {
        format!("{}s", ms / 1000)
    }
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
    fn alert(&self, e: &Expr, for_ms: i64) -> SnippetCheck {
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
    fn trigger(&self, e: &Expr) -> (SnippetCheck, u64) {
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

/// An alert rule snippet.
fn rule(c: &Checker<'_>, name: &str, e: Expr, summary: &str) -> Snippet {
    let expr = e.promql();
    let text = format!(
        "groups:\n  - name: vllm-lens\n    interval: {}\n    rules:\n      - alert: {name}\n        expr: {}\n        for: {}\n        labels:\n          severity: warning\n        annotations:\n          summary: {}\n",
        prom_duration(c.grid.width_ms),
        quoted(&expr),
        prom_duration(FOR_MS),
        quoted(summary)
    );
    Snippet {
        kind: "prometheus-rule".into(),
        name: name.to_string(),
        text,
        check: c.alert(&e, FOR_MS),
        expr,
    }
}

/// A KEDA trigger snippet.
fn keda(c: &Checker<'_>, name: &str, e: Expr, comment: &str) -> Snippet {
    let expr = e.promql();
    let (metric_type, threshold) = match &e {
        Expr::InFlight { per_replica, .. } => ("AverageValue", *per_replica),
        Expr::Average { target, .. } => ("Value", *target),
        _ => ("Value", 1.0),
    };
    let (check, most) = c.trigger(&e);
    // Fewer than run now: it would scale in, and each replica would carry
    // more than the capture saw one carry.
    let fewer = if most > 0 && (most as usize) < c.replicas {
        format!(
            "\n# That is fewer than the {} replicas running: set minReplicaCount: {} unless the load per replica after a scale-in has been tested.",
            c.replicas, c.replicas
        )
    } else {
        String::new()
    };
    let text = format!(
        "# KEDA ScaledObject (excerpt). {comment}\n# Over this capture it would have asked for up to {most} replica(s).{fewer}\n# Set serverAddress to your Prometheus.\nspec:\n  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior:\n        scaleDown:\n          stabilizationWindowSeconds: {}\n  triggers:\n    - type: prometheus\n      metricType: {metric_type}\n      metadata:\n        serverAddress: ${{PROMETHEUS_URL}}\n        query: {}\n        threshold: \"{}\"\n",
        STABILISATION_MS / 1000,
        quoted(&expr),
        fmt(threshold)
    );
    Snippet {
        kind: "keda".into(),
        name: name.to_string(),
        text,
        check,
        expr,
    }
}

/// The first name read for a signal, or its preferred name.
fn name(ctx: &Ctx<'_>, s: Signal) -> String {
    ctx.catalogue.get(s).used.first().map_or_else(
        || s.info().candidates[0].name.to_string(),
        |n| n.to_string(),
    )
}

fn selector(model: Option<&str>) -> Selector {
    Selector(model.map(|m| ("model_name".to_string(), m.to_string())))
}

/// The queueing alert: requests waiting on a replica at every evaluation
/// for two minutes, the queue objective's own definition of queueing
/// (waiting on consecutive scrapes): the replica runs at its admission cap
/// (`--max-num-seqs`, the KV cache or the token budget) and more load
/// waits.
pub(crate) fn queue_alert(ctx: &Ctx<'_>, c: &Checker<'_>, model: Option<&str>) -> Option<Snippet> {
    if !ctx.has(Signal::Waiting) {
        return None;
    }
    let cap = ctx.queue.admission_cap().map_or(String::new(), |c| {
        format!(
            " (this capture: at most {} ran at once while others waited)",
            num(c)
        )
    });
    Some(rule(
        c,
        "VllmRequestsQueueing",
        Expr::MaxAbove {
            gauge: name(ctx, Signal::Waiting),
            sel: selector(model),
            above: 0.0,
        },
        &format!(
            "vLLM requests have waited for 2 minutes on {{{{ $labels.instance }}}}: it has no room for more (a sequence slot, KV blocks or the step's token budget){cap}"
        ),
    ))
}

/// The KV-cache-full alert: preemptions come next.
pub(crate) fn kv_alert(ctx: &Ctx<'_>, c: &Checker<'_>, model: Option<&str>) -> Option<Snippet> {
    if !ctx.has(Signal::KvUsage) {
        return None;
    }
    Some(rule(
        c,
        "VllmKvCacheFull",
        Expr::MaxAbove {
            gauge: name(ctx, Signal::KvUsage),
            sel: selector(model),
            above: crate::thresholds::KV_FULL_PCT / 100.0,
        },
        "vLLM KV cache above 90 % on {{ $labels.instance }}: preemptions and queueing follow",
    ))
}

/// What the in-flight trigger keeps per replica, and why.
pub(crate) struct InFlightTarget {
    pub per_replica: f64,
    pub why: String,
}

/// The in-flight target from what the capture measured: the most requests
/// a replica admitted without waiting (its admission cap, or one below
/// where queueing started). Where that lies near or below the queue
/// objective, the target is 80 % of it, so the HPA (which acts 10 % above
/// its target) adds a replica before requests wait; where nothing queued,
/// the most a replica held (at least the objective's load).
pub(crate) fn in_flight_target(ctx: &Ctx<'_>) -> InFlightTarget {
    let n = ctx.settings.slo.queue_concurrency;
    let q = ctx.queue;
    let (cap, start) = (q.admission_cap(), q.queueing_starts_at());
    let knee = match (cap, start) {
        (Some(c), Some(s)) => Some(c.min(s - 1.0)),
        (c, s) => c.or(s.map(|s| s - 1.0)),
    }
    .filter(|k| *k >= 1.0);
    match knee {
        Some(k) if k < 1.25 * n => {
            let t = (0.8 * k).floor().max(1.0);
            InFlightTarget {
                per_replica: t,
                why: format!(
                    "80 % of the {} requests a replica admitted without waiting{}: the autoscaler acts 10 % above its target, before requests queue",
                    num(k),
                    start.map_or(String::new(), |s| format!(
                        " (queueing from {} in flight)",
                        num(s)
                    ))
                ),
            }
        }
        Some(k) => InFlightTarget {
            per_replica: n,
            why: format!(
                "the load the queue objective names; a replica admitted up to {} without waiting",
                num(k)
            ),
        },
        None => match q.peak_without_queueing().filter(|p| *p > n) {
            // Nothing queued: the capture did not find where queueing
            // starts, only that this many were admitted at once.
            Some(p) => InFlightTarget {
                per_replica: p,
                why: format!(
                    "the most a replica held without anything waiting; the capture never found where queueing starts, so above the {} the queue objective names",
                    num(n)
                ),
            },
            None => InFlightTarget {
                per_replica: n,
                why: "the load the queue objective names".into(),
            },
        },
    }
}

/// The in-flight trigger: the target per replica from
/// [`in_flight_target`].
pub(crate) fn in_flight_trigger(
    ctx: &Ctx<'_>,
    c: &Checker<'_>,
    model: Option<&str>,
) -> Option<Snippet> {
    if !(ctx.has(Signal::Running) && ctx.has(Signal::Waiting)) {
        return None;
    }
    let target = in_flight_target(ctx);
    Some(keda(
        c,
        "KEDA trigger on requests in flight",
        Expr::InFlight {
            running: name(ctx, Signal::Running),
            waiting: name(ctx, Signal::Waiting),
            sel: selector(model),
            per_replica: target.per_replica,
        },
        &format!(
            "Keeps about {} requests in flight (running + waiting) per replica: {}.",
            num(target.per_replica),
            target.why
        ),
    ))
}

/// The KV trigger: scale out before the pool fills.
pub(crate) fn kv_trigger(ctx: &Ctx<'_>, c: &Checker<'_>, model: Option<&str>) -> Option<Snippet> {
    if !ctx.has(Signal::KvUsage) {
        return None;
    }
    Some(keda(
        c,
        "KEDA trigger on KV-cache usage",
        Expr::Average {
            gauge: name(ctx, Signal::KvUsage),
            sel: selector(model),
            target: crate::thresholds::KV_WARN_PCT / 100.0,
        },
        "Scales out when the KV cache averages above 60 % across replicas, before it fills.",
    ))
}

/// What to watch whatever the verdict: the queue and KV alerts and the
/// in-flight trigger.
pub(crate) fn alerts(ctx: &Ctx<'_>, c: &Checker<'_>, model: Option<&str>) -> Vec<Snippet> {
    [
        queue_alert(ctx, c, model),
        kv_alert(ctx, c, model),
        in_flight_trigger(ctx, c, model),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promql_text() {
        let sel = Selector(Some(("model_name".into(), "a\"b".into())));
        let e = Expr::MaxAbove {
            gauge: "w".into(),
            sel,
            above: 0.0,
        };
        assert_eq!(
            e.promql(),
            "max by (instance) (w{model_name=\"a\\\"b\"}) > 0"
        );
        assert_eq!(quoted("it's"), "'it''s'");
        assert_eq!(prom_duration(60_000), "1m");
        assert_eq!(prom_duration(15_000), "15s");
        assert_eq!(prom_duration(3_600_000), "1h");
    }
}
