//! Rules on the hardware: a GPU that reported a fault is diagnosed before
//! anything is tuned on it.

use crate::advise::rules::rule::{Fired, In, Rule, Words};
use crate::ids::{Addresses as A, GpuFaultKind as K, RecId};
use crate::measure::faults;
use crate::model::{Confidence, GpuFault};

pub(super) const INVESTIGATE_GPU_FAULT: Rule = Rule {
    id: RecId::new("investigate_gpu_fault"),
    levers: &[],
    addresses: &[A::Reliability],
    investigation: true,
    words: Words {
        title: "Diagnose {gpu}: it reported a hardware fault",
        why: "{what}.",
        action: "{how}",
        caveat: "{caveat}",
    },
    fire: investigate_gpu_fault,
};

/// What to do about one kind of fault.
fn how(f: &GpuFault) -> String {
    match f.kind {
        K::Xid => format!(
            "look {} up in NVIDIA's XID catalogue and read the node's kernel log around {} (dmesg -T | grep -i xid)",
            f.detail.split(" (").next().unwrap_or(&f.detail),
            crate::time::format_rfc3339(f.seen_ms)
        ),
        K::EccDoubleBit | K::UncorrectableRemappedRows => "take it out of service (cordon the node, or take its replica out of the load balancer), reset it so that the driver retires or remaps the failed memory (nvidia-smi -r, or reboot the node), read nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER and run dcgmi diag -r 3 before it serves again".to_string(),
        K::RowRemapFailure => "take it out of service and have the board replaced: its memory could not replace a failed row (nvidia-smi -q -d ROW_REMAPPER shows the remap state)".to_string(),
        K::ClocksHeld => "read nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER on the node under load (it shows the reason active now): thermal reasons point at cooling and airflow, hw_power_brake and hw_slowdown at the power supply or the board".to_string(),
    }
}

/// Every GPU that reported a fault, with what it reported and what to do.
fn investigate_gpu_fault(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let first = ctx.faults.first()?;
    let mut gpus: Vec<&str> = ctx.faults.iter().map(|f| f.name.as_str()).collect();
    gpus.dedup();
    let what = faults::per_gpu(ctx.faults);
    let mut steps: Vec<String> = Vec::new();
    for f in ctx.faults {
        let h = how(f);
        if !steps.contains(&h) {
            steps.push(h);
        }
    }
    let mut action = format!("On {}: {}.", gpus.join(" and "), steps.join("; "));
    if let Some(c) = action.get(..1) {
        action = c.to_uppercase() + &action[1..];
    }
    let old = ctx.faults.iter().any(|f| f.before_capture);
    let xid = ctx.faults.iter().any(|f| f.kind == K::Xid);
    let mut caveat: Vec<&str> = Vec::new();
    if xid {
        caveat.push("Some XIDs follow the application's own fault (13, 31 and 43 often do), not the hardware's; the catalogue entry says which.");
    }
    caveat.push("On a cloud instance, the board's cooling and memory are the provider's: stopping and starting the instance moves it to other hardware.");
    if old {
        caveat.push("A fault already showing at the first scrape may be old: the last XID and the ECC counts hold until the driver reloads, remapped rows for the board's life.");
    }
    let mut f = Fired::new(
        Vec::new(),
        vec![(A::Reliability, 1.0)],
        vec![
            ("gpu", gpus.join(" and ")),
            ("what", what.join("; ")),
            ("how", action),
            ("caveat", caveat.join(" ")),
        ],
        if first.before_capture && ctx.faults.iter().all(|f| f.before_capture) {
            Confidence::Medium
        } else {
            Confidence::High
        },
    );
    f.evidence = ctx
        .faults
        .iter()
        .map(|x| {
            ctx.ev_at(
                &format!("{} on {}", x.detail, x.name),
                Some(if x.kind == K::ClocksHeld {
                    f64::from(x.scrapes)
                } else {
                    x.value
                }),
                if x.kind == K::ClocksHeld {
                    "scrapes"
                } else {
                    ""
                },
                &[faults::signal(x.kind)],
                ctx.window_of(x.seen_ms).into_iter().collect(),
            )
        })
        .collect();
    Some(f)
}
