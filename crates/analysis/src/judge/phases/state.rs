//! What the segmentation reads per window, apart from the phases so that
//! the checks beside them (the gauges) read it without a circle.

/// What the segmentation reads per window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WindowState {
    /// Mean requests in flight (fleet).
    pub in_flight: Option<f64>,
    /// The standard error of `in_flight`, from the window's scrapes (their
    /// spread, corrected for the correlation of neighbouring scrapes);
    /// `None` where a replica had fewer than two scrapes in the window.
    pub in_flight_se: Option<f64>,
    /// Finished requests per minute.
    pub requests_per_min: Option<f64>,
    /// Its standard error (a Poisson count's: √count per covered minute).
    pub requests_per_min_se: Option<f64>,
    /// Part of a restart (outage of a replica and the new process's first
    /// scrape).
    pub restart: bool,
    /// A replica could not be scraped in the whole window.
    pub down: bool,
    /// A process's first minutes.
    pub warmup: bool,
    /// Errors or aborts burst.
    pub burst: bool,
    /// Requests in the engine by Little's law (fleet): finished per second
    /// × the mean e2e latency.
    pub little: Option<f64>,
}
