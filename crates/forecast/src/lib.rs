/*!
The forecast: what each change would give, predicted by a model of this
server that is calibrated on the capture alone (`docs/forecast.md`).

1. [`input`]: what the model reads from the report (the loaded windows per
   replica, the configuration, the workload's lengths).
2. [`fit`]: the engine's step time as a function of the batch, fitted on
   the windows' inter-token and prefill times (a range where the windows
   cannot tell the terms apart), the front end's share of TTFT, and
   whether the load looks closed- or open-loop.
3. [`replay`]: the load replayed through the continuous-batching engine of
   `vllm-lens-engine` under a configuration.
4. [`backtest`]: today's configuration replayed at each window's load,
   against what the window measured; a forecast that misses predicts
   nothing.
5. [`scenarios`]: today and each change at the capture's peak load level,
   their predicted scorecards, and the load sweep.

Sans-IO and deterministic: the same report gives the same forecast.
*/
#![deny(missing_docs)]

pub mod backtest;
pub mod fit;
pub mod input;
pub mod replay;
pub mod scenarios;

pub use input::{Ask, Input, Setting};
pub use scenarios::{predict, summary_for};

use vllm_lens_model::forecast::{Calibration, Forecast, ForecastStatus};

/// Calibrates the model on the capture, back-tests it, and forecasts
/// today's configuration and every modelled change of the report's
/// recommendations at the capture's peak load level.
pub fn forecast(input: &Input<'_>) -> Forecast {
    let wins = input::windows(input.report);
    let (settings, mut assumed) = input::settings(input.report);
    let Some(workload) = input::workload(input, &wins) else {
        return cannot(
            "No window carried a steady load with latency histograms and finished requests: the model has nothing to be fitted on.",
        );
    };
    if wins.is_empty() {
        return cannot(
            "No window carried a steady load with latency histograms and finished requests: the model has nothing to be fitted on.",
        );
    }
    let Some(fit) = fit::fit(&wins, &settings, input.report.capacity.itl_floor_ms) else {
        return cannot(
            "The windows' inter-token and prefill times admit no step cost (no window had both): the model cannot be fitted.",
        );
    };
    assumed.extend(fit.assumed.iter().cloned());
    let model = fit::engine_fit(&fit, &wins, settings.clone(), workload, assumed);
    let calibration = backtest::backtest(input, &wins, &fit, &model);
    let calibrated = calibration.misses.is_empty();
    let mut out = Forecast {
        status: if calibrated {
            ForecastStatus::Calibrated
        } else {
            ForecastStatus::NotCalibrated
        },
        explanation: String::new(),
        model: Some(model),
        calibration,
        scenarios: Vec::new(),
        sweep: Vec::new(),
    };
    if calibrated {
        scenarios::standard(input.report, &mut out);
    }
    out.explanation = explain(&out);
    out
}

fn cannot(why: &str) -> Forecast {
    Forecast {
        status: ForecastStatus::CannotForecast,
        explanation: why.to_string(),
        model: None,
        calibration: Calibration::default(),
        scenarios: Vec::new(),
        sweep: Vec::new(),
    }
}

fn explain(f: &Forecast) -> String {
    let e = &f.calibration.error;
    let shape = f.model.as_ref().map_or("", |m| match m.load_shape {
        vllm_lens_model::forecast::LoadShape::Closed => {
            "closed-loop (users who wait for each answer)"
        }
        vllm_lens_model::forecast::LoadShape::Open => "open-loop (arrivals whatever the latency)",
    });
    let held = format!(
        "replaying today's configuration at the load of {} gave the TTFT p95 within tolerance in {} of {}, the inter-token p95 in {} of {}, and the load in {} of {}",
        if e.windows == 1 {
            "its one steady window".to_string()
        } else {
            format!("each of {} windows", e.windows)
        },
        e.ttft_hits,
        e.ttft_windows,
        e.itl_hits,
        e.itl_windows,
        e.load_hits,
        e.windows
    );
    let pct = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v:.0} %"));
    let errors = format!(
        " (median errors: TTFT p95 {}, inter-token p95 {}, against a tolerance of ±25 % or an adjacent bucket)",
        pct(e.ttft_p95_pct),
        pct(e.itl_p95_pct)
    );
    match f.status {
        ForecastStatus::Calibrated => format!(
            "Calibrated: {held}{errors}. The back-test replays the windows the model was fitted on: it proves the model at the loads the capture ran, and a load or setting beyond them is an extrapolation of the same model. The load looks {shape}. Each scenario below replays the capture's peak load level (its users: the most requests the engine held at one scrape) through the same engine model with one setting changed; ranges cover what the windows cannot tell apart and the back-test's error."
        ),
        ForecastStatus::NotCalibrated => format!(
            "Not calibrated: {held}, so nothing is predicted. Misses: {}.",
            f.calibration.misses.join("; ")
        ),
        ForecastStatus::CannotForecast => String::new(),
    }
}
