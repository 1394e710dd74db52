//! One shell API: what the CLI and the page both do with a bundle. A
//! [`Session`] holds a loaded bundle; it makes the report for any
//! [`Settings`] without reading the bundle again, redacts it, compares it
//! with another session's, and [`Format`] renders the result. The shells
//! only read bytes, parse their own arguments or form, and write the text.

use vllm_lens_analysis::{BundleMeta, PendingForecast, analyse, analyse_deferred};
use vllm_lens_bundle::{Diagnostic, Error, Input, Loaded, Options, Severity, load};
use vllm_lens_model::Report;
use vllm_lens_model::compare::Comparison;

use crate::redact::Redactor;
use crate::settings::{Settings, SettingsError, check};

/// A loaded bundle and what the shell knows about it (its name, the
/// SHA-256 of its bytes).
pub struct Session {
    loaded: Loaded,
    meta: BundleMeta,
}

impl Session {
    /// Loads `input`, shown in reports as `name`. The digest is not taken
    /// here: the page has the browser hash the bytes on another thread, so
    /// call [`Session::hash`] or [`Session::set_sha256`] after.
    pub fn load(name: &str, input: Input<'_>, options: &Options) -> Result<Session, Error> {
        Ok(Session::new(
            load(input, options)?,
            BundleMeta {
                name: name.to_string(),
                sha256: None,
            },
        ))
    }

    /// A session over a bundle already loaded.
    pub fn new(loaded: Loaded, meta: BundleMeta) -> Session {
        Session { loaded, meta }
    }

    /// Hashes the bundle's bytes for the report header.
    pub fn hash(&mut self, bytes: &[u8]) {
        self.meta.sha256 = Some(crate::sha256_hex(bytes));
    }

    /// Records a SHA-256 computed elsewhere (64 hex digits); false, and
    /// nothing recorded, for anything else.
    pub fn set_sha256(&mut self, hex: &str) -> bool {
        if hex.len() != 64 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
        self.meta.sha256 = Some(hex.to_ascii_lowercase());
        true
    }

    /// The bundle's name and digest.
    pub fn meta(&self) -> &BundleMeta {
        &self.meta
    }

    /// The loaded bundle (store, targets, diagnostics).
    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// Every line or file that could not be read, notes excluded.
    pub fn problems(&self) -> impl Iterator<Item = &Diagnostic> {
        self.loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity != Severity::Info)
    }

    /// The report for `settings` (checked first).
    pub fn report(&self, settings: &Settings) -> Result<Report, SettingsError> {
        check(settings)?;
        analyse(&self.loaded, &self.meta, settings).map_err(|e| SettingsError(e.to_string()))
    }

    /// [`Session::report`] in two steps: the report without its forecast,
    /// and what fills it in (the page times the forecast apart).
    pub fn report_deferred(
        &self,
        settings: &Settings,
    ) -> Result<(Report, PendingForecast), SettingsError> {
        check(settings)?;
        analyse_deferred(&self.loaded, &self.meta, settings)
            .map_err(|e| SettingsError(e.to_string()))
    }

    /// The redactor for this bundle and `report`: it hides hostnames,
    /// pods, IPs, UUIDs and the model name it finds in either.
    pub fn redactor(&self, report: &Report) -> Redactor {
        let json = vllm_lens_render::json(report);
        Redactor::new(&self.loaded, &[&json])
    }

    /// The report for `settings` with every identifying name replaced, and
    /// the redactor (for the shell's own messages).
    pub fn redacted_report(
        &self,
        settings: &Settings,
    ) -> Result<(Report, Redactor), SettingsError> {
        let report = self.report(settings)?;
        let r = self.redactor(&report);
        Ok((r.report(&report), r))
    }

    /// Compares this session (before a change) with `after` under the same
    /// settings.
    pub fn compare(
        &self,
        after: &Session,
        settings: &Settings,
    ) -> Result<Comparison, SettingsError> {
        let a = self.report(settings)?;
        let b = after.report(settings)?;
        Ok(vllm_lens_analysis::compare::compare(&a, &b))
    }
}

/// How a result is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One self-contained HTML file.
    Html,
    /// The model as JSON (`docs/report-schema.md`).
    Json,
    /// A summary for a ticket.
    Markdown,
    /// The gist for a terminal (a comparison prints its Markdown).
    Text,
}

impl Format {
    /// Renders a report.
    pub fn report(self, r: &Report) -> String {
        match self {
            Format::Html => vllm_lens_render::html(r),
            Format::Json => vllm_lens_render::json(r),
            Format::Markdown => vllm_lens_render::markdown(r),
            Format::Text => crate::report::to_text(r),
        }
    }

    /// Writes a report's rendering to `w`. The JSON is written as it is
    /// made (never held whole: 156 MB for a fleet-day); the others are
    /// rendered, then written. Give it a buffered writer.
    pub fn write_report(self, r: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            Format::Json => vllm_lens_render::json_to(r, w),
            _ => w.write_all(self.report(r).as_bytes()),
        }
    }

    /// Renders a comparison.
    pub fn comparison(self, c: &Comparison) -> String {
        match self {
            Format::Html => vllm_lens_render::compare::html(c),
            Format::Json => vllm_lens_render::compare::json(c),
            Format::Markdown | Format::Text => vllm_lens_render::compare::markdown(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(ms: i64, running: u32) -> (String, Vec<u8>) {
        (
            format!("{ms}-vllm.prom"),
            format!(
                "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{model_name=\"tiny-llama\"}} {running}\nvllm:bad line\n"
            )
            .into_bytes(),
        )
    }

    fn session() -> Session {
        let mut files = crate::MemoryFiles::default();
        for i in 0..5 {
            let (name, bytes) = scrape(1_767_225_600_000 + i * 15_000, i as u32);
            files.push(&name, bytes, None);
        }
        Session::load("five", Input::Files(&mut files), &Options::default()).unwrap()
    }

    #[test]
    fn a_session_reports_for_any_settings_and_names_its_problems() {
        let mut s = session();
        assert_eq!(s.problems().count(), 5, "one bad line per scrape");
        assert!(!s.set_sha256("<script>"));
        assert_eq!(s.meta().sha256, None);
        s.hash(b"x");
        assert_eq!(
            s.meta().sha256.as_deref(),
            Some(crate::sha256_hex(b"x").as_str())
        );
        let one = s.report(&Settings::default()).unwrap();
        let wide = Settings {
            window_ms: 300_000,
            ..Settings::default()
        };
        let five = s.report(&wide).unwrap();
        assert_eq!(one.settings.window_ms, 60_000);
        assert_eq!(five.settings, wide);
        let bad = Settings {
            window_ms: 1,
            ..Settings::default()
        };
        assert!(s.report(&bad).unwrap_err().0.contains("15 s to 1 h"));
    }

    #[test]
    fn every_format_renders_reports_and_comparisons() {
        let s = session();
        let r = s.report(&Settings::default()).unwrap();
        assert!(Format::Html.report(&r).starts_with("<!DOCTYPE html>"));
        assert!(Format::Json.report(&r).starts_with('{'));
        assert!(Format::Markdown.report(&r).starts_with('#'));
        assert!(Format::Text.report(&r).contains("SLO scorecard"));
        for f in [Format::Html, Format::Json, Format::Markdown, Format::Text] {
            let mut written = Vec::new();
            f.write_report(&r, &mut written).unwrap();
            assert_eq!(
                written,
                f.report(&r).into_bytes(),
                "{f:?} written as rendered"
            );
        }
        let c = s.compare(&session(), &Settings::default()).unwrap();
        assert!(Format::Html.comparison(&c).starts_with("<!DOCTYPE html>"));
        assert_eq!(Format::Text.comparison(&c), Format::Markdown.comparison(&c));
    }

    #[test]
    fn a_redacted_report_hides_names_and_keeps_its_shape() {
        // The target is named `vllm` after its files, so the store's
        // `instance` is `vllm` too: hidden as a host where it stands alone,
        // never inside field or metric names (this panicked once).
        let s = session();
        let plain = Format::Json.report(&s.report(&Settings::default()).unwrap());
        assert!(plain.contains("tiny-llama"));
        let (r, redactor) = s.redacted_report(&Settings::default()).unwrap();
        let pairs: Vec<(&str, &str)> = redactor
            .pairs()
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(pairs, [("tiny-llama", "model-1"), ("vllm", "host-1")]);
        let json = Format::Json.report(&r);
        assert!(!json.contains("tiny-llama"));
        assert!(json.contains("model-1"));
        assert!(json.contains("\"vllm_version\""));
        assert!(json.contains("vllm:num_requests_running"));
    }
}
