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

use vllm_lens_catalog::Signal;

use crate::judge::ctx::{Ctx, in_flight_target};
use crate::measure::promql::{Checker, Expr, STABILISATION_MS, Selector, fmt, quoted};
use crate::model::Snippet;
use crate::text::{num, prom_duration};

/// The alerts' `for:`, ms.
pub(crate) const FOR_MS: i64 = 120_000;

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
            above: crate::measure::thresholds::KV_FULL_PCT / 100.0,
        },
        "vLLM KV cache above 90 % on {{ $labels.instance }}: preemptions and queueing follow",
    ))
}

/// The in-flight trigger: the target per replica from
/// [`in_flight_target`] (in `judge::ctx`: the verdict's follow-up
/// names the same target).
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
            target: crate::measure::thresholds::KV_WARN_PCT / 100.0,
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
