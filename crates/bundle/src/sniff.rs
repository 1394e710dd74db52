//! What a member holds, told from its first bytes rather than its name.

use memchr::memmem;

/// The content classes the loader knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Prometheus text or OpenMetrics (or something that may be: the parse
    /// decides).
    Exposition,
    /// `nvidia-smi --query-gpu=... --format=csv`.
    NvidiaSmiCsv,
    /// `nvidia-smi dmon`.
    NvidiaSmiDmon,
    /// `dcgmi dmon`.
    DcgmiDmon,
    /// A Prometheus HTTP API answer (`query_range` matrix) in JSON.
    PromApiJson,
    /// Not text: an image, a PDF, an executable, a nested archive...
    Binary(&'static str),
}

const NVIDIA_SMI_FIELDS: [&str; 12] = [
    "timestamp",
    "index",
    "uuid",
    "utilization.gpu",
    "utilization.memory",
    "memory.used",
    "memory.total",
    "memory.free",
    "power.draw",
    "temperature.gpu",
    "clocks.sm",
    "pci.bus_id",
];

/// Classifies a member's bytes.
pub fn sniff(bytes: &[u8]) -> Content {
    const MAGIC: [(&[u8], &str); 9] = [
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"%PDF", "a PDF document"),
        (
            b"PK\x03\x04",
            "a zip archive inside the bundle (nested archives are not read)",
        ),
        (b"\x1f\x8b", "gzip data"),
        (b"\x7fELF", "an executable"),
        (b"BZh", "bzip2 data (not supported: use gzip)"),
        (b"\xfd7zXZ", "xz data (not supported: use gzip)"),
    ];
    for (magic, what) in MAGIC {
        if bytes.starts_with(magic) {
            return Content::Binary(what);
        }
    }
    if bytes.starts_with(b"\x28\xb5\x2f\xfd") {
        return Content::Binary("zstd data (not supported: use gzip)");
    }
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Content::Binary("binary data");
    }
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if crate::prom_api::looks_like(&text) {
        return Content::PromApiJson;
    }
    if first.starts_with("#Entity") || first.starts_with("# Entity") {
        return Content::DcgmiDmon;
    }
    if let Some(rest) = first.strip_prefix('#') {
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        let lead = tokens.first().copied().unwrap_or("");
        let known = [
            "pwr", "sm", "mem", "fb", "gtemp", "temp", "mclk", "pclk", "enc", "dec",
        ];
        if matches!(lead, "gpu" | "Date" | "Time" | "Idx")
            && tokens.iter().any(|t| known.contains(t))
        {
            return Content::NvidiaSmiDmon;
        }
    }
    if !first.starts_with('#') && !first.contains('{') && first.contains(',') {
        let fields = first
            .split(',')
            .map(|f| f.trim().split(" [").next().unwrap_or("").trim());
        if fields.filter(|f| NVIDIA_SMI_FIELDS.contains(f)).count() >= 2 {
            return Content::NvidiaSmiCsv;
        }
    }
    Content::Exposition
}

/// Which exporter a scrape's text comes from, by its family names.
pub fn exposition_kind(text: &str) -> vllm_lens_store::TargetKind {
    use vllm_lens_store::TargetKind;
    let b = text.as_bytes();
    // `vllm:` anywhere, or a line starting `vllm_` (0.4-era names): one
    // scan, which on a DCGM scrape has to read the whole text.
    let vllm = memmem::find_iter(b, b"vllm").any(|i| match b.get(i + 4) {
        Some(b':') => true,
        Some(b'_') => i == 0 || b[i - 1] == b'\n',
        _ => false,
    });
    if vllm {
        TargetKind::Vllm
    } else if memmem::find(b, b"DCGM_FI_").is_some() || memmem::find(b, b"dcgm_").is_some() {
        TargetKind::Dcgm
    } else {
        TargetKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::exposition_kind;
    use vllm_lens_store::TargetKind;

    #[test]
    fn exporter_kind_by_family_names() {
        for (text, want) in [
            ("vllm:num_requests_running 1\n", TargetKind::Vllm),
            (
                "# HELP x y\nvllm:num_requests_running 1\n",
                TargetKind::Vllm,
            ),
            ("vllm_num_requests_running 1\n", TargetKind::Vllm),
            ("x 1\nvllm_num_requests_running 1\n", TargetKind::Vllm),
            (
                "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\nvllm:x 1\n",
                TargetKind::Vllm,
            ),
            (
                "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",model=\"vllm_x\"} 5\n",
                TargetKind::Dcgm,
            ),
            ("dcgm_gpu_utilization 5\n", TargetKind::Dcgm),
            (
                "process_cpu_seconds_total{job=\"vllm\"} 1\n",
                TargetKind::Other,
            ),
            ("xvllm_y 1\n", TargetKind::Other),
            ("vllm", TargetKind::Other),
        ] {
            assert_eq!(exposition_kind(text), want, "{text:?}");
        }
    }
}
