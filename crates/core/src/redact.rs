//! `--redact`: hostnames, pod names, IP addresses, UUIDs and the served
//! model's name replaced by stable placeholders (`host-1`, `pod-1`, `ip-1`,
//! `uuid-1`, `model-1`) in every output, so a report can be attached to a
//! ticket outside the team.
//!
//! The values come from the labels that carry them (`Hostname`, `hostname`,
//! `node`, `instance`, `pod`, `exported_pod`, `UUID`, `uuid`, `model_name`),
//! the manifest, and a scan for IPv4 addresses and UUID-shaped strings. The
//! placeholders are numbered in sorted order of the values, so the HTML,
//! Markdown, JSON and text of one report agree. The report model is redacted
//! before rendering, so the JSON embedded in the HTML is redacted too.

use std::collections::{BTreeMap, BTreeSet};

use vllm_lens_bundle::Loaded;
use vllm_lens_model::Report;

/// Replacements, longest value first.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    pairs: Vec<(String, String)>,
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// UUID-shaped substrings (8-4-4-4-12 hex digits).
fn uuids(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let groups = [8, 4, 4, 4, 12];
    let mut i = 0;
    while i + 36 <= b.len() {
        let mut j = i;
        let mut ok = i == 0 || !is_hex(b[i - 1]);
        for (g, &n) in groups.iter().enumerate() {
            if !ok {
                break;
            }
            ok = b[j..j + n].iter().all(|&c| is_hex(c));
            j += n;
            if g < 4 {
                ok = ok && b.get(j) == Some(&b'-');
                j += 1;
            }
        }
        if ok && (j == b.len() || !is_hex(b[j])) {
            out.push(s[i..j].to_string());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Dotted-quad IPv4 addresses.
fn ipv4s(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() || (i > 0 && (b[i - 1].is_ascii_digit() || b[i - 1] == b'.')) {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut parts = 0;
        let mut ok = true;
        loop {
            let start = j;
            while j < b.len() && b[j].is_ascii_digit() && j - start < 4 {
                j += 1;
            }
            let n = j - start;
            if n == 0 || n > 3 || s[start..j].parse::<u16>().map_or(true, |v| v > 255) {
                ok = false;
                break;
            }
            parts += 1;
            if parts == 4 {
                break;
            }
            if b.get(j) != Some(&b'.') {
                ok = false;
                break;
            }
            j += 1;
        }
        let bounded = j == b.len()
            || !(b[j].is_ascii_digit()
                || (b[j] == b'.' && b.get(j + 1).is_some_and(u8::is_ascii_digit)));
        if ok && parts == 4 && bounded {
            out.push(s[i..j].to_string());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// A character that continues a word or a metric name.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with each whole occurrence of `value` replaced by `with`: the
/// characters either side are not word characters, and a colon after it
/// does not start a metric name's next part (a colon before a digit, a
/// port, is a boundary).
fn replace_whole(text: &str, value: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(value) {
        if at < last {
            continue;
        }
        let end = at + value.len();
        let before = text[..at].chars().next_back();
        let mut after = text[end..].chars();
        let next = after.next();
        let whole = !before.is_some_and(|c| is_word(c) || c == ':')
            && match next {
                None => true,
                Some(':') => after
                    .next()
                    .is_none_or(|c| !is_word(c) || c.is_ascii_digit()),
                Some(c) => !is_word(c),
            };
        if whole {
            out.push_str(&text[last..at]);
            out.push_str(with);
            last = end;
        }
    }
    out.push_str(&text[last..]);
    out
}

impl Redactor {
    /// Gathers what to hide from a loaded bundle and from `texts` (the
    /// outputs about to be written, scanned for IPs and UUIDs).
    pub fn new(loaded: &Loaded, texts: &[&str]) -> Redactor {
        let store = &loaded.store;
        let mut found: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
        let mut add = |kind: &'static str, v: &str| {
            let v = v.trim();
            if v.len() >= 3 && !v.chars().all(|c| c.is_ascii_digit()) {
                found.entry(kind).or_default().insert(v.to_string());
            }
        };
        let label_kind = |k: &str| match k {
            "Hostname" | "hostname" | "node" | "exported_node" | "exported_Hostname" => {
                Some("host")
            }
            "pod" | "exported_pod" | "pod_name" => Some("pod"),
            "UUID" | "uuid" | "exported_UUID" => Some("uuid"),
            "model_name" => Some("model"),
            "instance" | "exported_instance" => Some("instance"),
            _ => None,
        };
        let mut seen_sets = BTreeSet::new();
        for (i, s) in store.all_series().iter().enumerate() {
            if !seen_sets.insert(s.label_set()) {
                continue;
            }
            for (k, v) in store.labels(vllm_lens_store::SeriesId(i as u32)) {
                match label_kind(k) {
                    Some("instance") => {
                        // host:port: the host part, unless it is an IP (scanned).
                        let host = v.rsplit_once(':').map_or(v, |(h, _)| h);
                        if ipv4s(host).is_empty() {
                            add("host", host);
                        }
                    }
                    Some(kind) => add(kind, v),
                    None => {}
                }
            }
        }
        if let Some(m) = &loaded.manifest {
            for t in &m.targets {
                for v in [&t.node].into_iter().flatten() {
                    add("host", v);
                }
                for v in [&t.pod].into_iter().flatten() {
                    add("pod", v);
                }
                for u in &t.gpu_uuids {
                    add("uuid", u);
                }
                if let Some(url) = &t.url {
                    let host = url
                        .split("://")
                        .nth(1)
                        .unwrap_or(url)
                        .split(['/', ':'])
                        .next()
                        .unwrap_or("");
                    if ipv4s(host).is_empty() {
                        add("host", host);
                    }
                }
            }
            if let Some(model) = m.environment.as_ref().and_then(|e| e.model.as_deref()) {
                add("model", model);
            }
        }
        let mut scan: Vec<String> = Vec::new();
        for set in found.values() {
            scan.extend(set.iter().cloned());
        }
        for t in texts {
            for ip in ipv4s(t) {
                found.entry("ip").or_default().insert(ip);
            }
            for u in uuids(t) {
                found.entry("uuid").or_default().insert(u);
            }
        }
        for v in &scan {
            for ip in ipv4s(v) {
                found.entry("ip").or_default().insert(ip);
            }
        }
        // A GPU UUID ("GPU-<uuid>") hides whole.
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (kind, values) in &found {
            for (n, v) in values.iter().enumerate() {
                pairs.push((v.clone(), format!("{kind}-{}", n + 1)));
            }
        }
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        pairs.dedup_by(|a, b| a.0 == b.0);
        Redactor { pairs }
    }

    /// The values hidden, with their placeholders.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// A text with every value replaced where it stands as a whole: not
    /// inside a longer word or name (`vllm` hides in `vllm-0`'s place, not
    /// in `vllm_version` or the metric name `vllm:num_requests_running`;
    /// `10.0.0.1` not in `10.0.0.12`). A port after a colon is not part of
    /// the name (`node-7:8000`).
    pub fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (v, p) in &self.pairs {
            if out.contains(v.as_str()) {
                out = replace_whole(&out, v, p);
            }
        }
        out
    }

    /// The report with every string and map key redacted, except the
    /// typed identifiers (finding, recommendation, SLO, phase and event
    /// ids and kinds) and the field names, which come from the tool, never
    /// from the bundle.
    pub fn report(&self, r: &Report) -> Report {
        /// Fields whose strings are the tool's own vocabulary.
        const IDS: [&str; 8] = [
            "id",
            "kind",
            "status",
            "severity",
            "confidence",
            "addresses",
            "analysis",
            "schema_version",
        ];
        struct Walk<'a> {
            fields: BTreeSet<String>,
            f: &'a dyn Fn(&str) -> String,
        }
        impl Walk<'_> {
            fn go(&self, v: &mut serde_json::Value, key: Option<&str>) {
                if key.is_some_and(|k| IDS.contains(&k)) {
                    return;
                }
                match v {
                    serde_json::Value::String(s) => *s = (self.f)(s),
                    serde_json::Value::Array(a) => a.iter_mut().for_each(|x| self.go(x, key)),
                    serde_json::Value::Object(o) => {
                        let old = std::mem::take(o);
                        for (k, mut x) in old {
                            self.go(&mut x, Some(&k));
                            let k = if self.fields.contains(&k) {
                                k
                            } else {
                                (self.f)(&k)
                            };
                            o.insert(k, x);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut v = serde_json::to_value(r).expect("the report serialises");
        let walk = Walk {
            fields: vllm_lens_analysis::field_names(),
            f: &|s| self.text(s),
        };
        walk.go(&mut v, None);
        serde_json::from_value(v).expect("redaction keeps the report's shape")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_hide_only_where_they_stand_whole() {
        let cases = [
            (
                "vllm",
                "replica vllm: 3 running",
                "replica host-1: 3 running",
            ),
            (
                "vllm",
                "vllm:num_requests_running",
                "vllm:num_requests_running",
            ),
            ("vllm", "vllm_version", "vllm_version"),
            ("vllm", "vllm-0", "host-1-0"),
            (
                "node-7",
                "node-7:8000 and node-70",
                "host-1:8000 and node-70",
            ),
            ("10.0.0.1", "10.0.0.1, 10.0.0.12", "host-1, 10.0.0.12"),
            (
                "gpu-a",
                "gpu-a.cluster.local gpu-a",
                "host-1.cluster.local host-1",
            ),
            ("ab", "ab", "host-1"),
        ];
        for (value, text, want) in cases {
            assert_eq!(
                replace_whole(text, value, "host-1"),
                want,
                "{value} in {text}"
            );
        }
    }

    #[test]
    fn scanners_find_ips_and_uuids() {
        assert_eq!(
            ipv4s("at 10.0.1.40:8000 and 300.1.1.1 or 1.2.3"),
            ["10.0.1.40"]
        );
        assert_eq!(
            uuids("GPU-b62440b0-1de0-ab52-0e78-6f7eb4543cf5,x"),
            ["b62440b0-1de0-ab52-0e78-6f7eb4543cf5"]
        );
    }
}
