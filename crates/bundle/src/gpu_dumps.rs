//! GPU dumps for hosts without dcgm-exporter: `dcgmi dmon`, `nvidia-smi
//! --query-gpu=... --format=csv` and `nvidia-smi dmon`, mapped onto the
//! dcgm-exporter field names and units and written out as Prometheus text
//! with per-sample timestamps, so one ingest path serves every format.
//!
//! `N/A`, `[N/A]`, `[Not Supported]` and `-` mean absent, never 0.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::naming::days_from_civil;
use crate::sniff::Content;

/// The text a dump became, with what had to be skipped.
#[derive(Debug, Default)]
pub struct Converted {
    /// Prometheus text 0.0.4 with millisecond timestamps.
    pub text: String,
    /// (line, message) for rows or cells skipped.
    pub diagnostics: Vec<(u32, String)>,
    /// File-level notes (assumptions made).
    pub notes: Vec<String>,
    /// Rows converted.
    pub rows: u32,
}

/// How a column maps onto a DCGM field.
#[derive(Clone, Copy)]
struct Field {
    name: &'static str,
    counter: bool,
    scale: f64,
}

const fn gauge(name: &'static str) -> Field {
    Field {
        name,
        counter: false,
        scale: 1.0,
    }
}

const fn scaled(name: &'static str, scale: f64) -> Field {
    Field {
        name,
        counter: false,
        scale,
    }
}

/// What a dump's column holds.
enum Column {
    /// Not a value (the GPU index, the date, the time).
    Skip,
    /// A DCGM field.
    Field(Field),
    /// A value with no DCGM field: noted, not read.
    Unmapped,
}

/// Collects samples per field, then prints them grouped by family.
#[derive(Default)]
struct Writer {
    families: BTreeMap<&'static str, (bool, String)>,
    rows: u32,
}

impl Writer {
    fn sample(
        &mut self,
        field: Field,
        labels: &[(&str, String)],
        value: f64,
        time_ms: Option<i64>,
    ) {
        let (_, body) = self
            .families
            .entry(field.name)
            .or_insert_with(|| (field.counter, String::new()));
        body.push_str(field.name);
        body.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            let escaped = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            let _ = write!(body, "{k}=\"{escaped}\"");
        }
        body.push('}');
        let _ = write!(body, " {}", value * field.scale);
        if let Some(t) = time_ms {
            let _ = write!(body, " {t}");
        }
        body.push('\n');
    }

    /// One dump row: each cell under a column that maps to a DCGM field
    /// becomes a sample; columns that map to none are noted once.
    fn row(
        &mut self,
        columns: &[String],
        cells: &[&str],
        labels: &[(&str, String)],
        time_ms: Option<i64>,
        field_of: impl Fn(&str) -> Column,
        unmapped: &mut Vec<String>,
    ) {
        for (column, cell) in columns.iter().zip(cells) {
            match field_of(column) {
                Column::Skip => {}
                Column::Field(field) => {
                    if let Some(v) = number(cell) {
                        self.sample(field, labels, v, time_ms);
                    }
                }
                Column::Unmapped => {
                    if !unmapped.contains(column) {
                        unmapped.push(column.clone());
                    }
                }
            }
        }
        self.rows += 1;
    }

    fn finish(self, mut out: Converted) -> Converted {
        for (name, (counter, body)) in self.families {
            let kind = if counter { "counter" } else { "gauge" };
            let _ = writeln!(out.text, "# TYPE {name} {kind}");
            out.text.push_str(&body);
        }
        out.rows = self.rows;
        out
    }
}

/// Rows without a time of their own: a new tick starts when an entity
/// (GPU) repeats; ticks are `delay_ms` apart from the file's time.
#[derive(Default)]
struct Ticks {
    tick: i64,
    seen: Vec<String>,
}

impl Ticks {
    fn time(&mut self, entity: &str, base_ms: Option<i64>, delay_ms: i64) -> Option<i64> {
        if self.seen.iter().any(|e| e == entity) {
            self.tick += 1;
            self.seen.clear();
        }
        self.seen.push(entity.to_string());
        base_ms.map(|b| b + self.tick * delay_ms)
    }
}

/// A numeric cell: the first token, with `N/A`-style values read as absent.
fn number(cell: &str) -> Option<f64> {
    let token = cell.split_whitespace().next()?;
    match token {
        "N/A" | "[N/A]" | "-" | "[Not" | "Not" | "[Unknown" | "Unknown" | "[Insufficient" => None,
        _ => vllm_lens_expo::parse_value(token).filter(|v| v.is_finite()),
    }
}

/// Converts a dump. `base_ms` is the file's capture time (for dumps whose
/// rows carry no time); `delay_ms` the interval between such rows.
pub fn convert(kind: Content, text: &str, base_ms: Option<i64>, delay_ms: i64) -> Converted {
    match kind {
        Content::NvidiaSmiCsv => nvidia_smi_csv(text, base_ms, delay_ms),
        Content::NvidiaSmiDmon => nvidia_smi_dmon(text, base_ms, delay_ms),
        Content::DcgmiDmon => dcgmi_dmon(text, base_ms, delay_ms),
        _ => Converted::default(),
    }
}

fn csv_field(header: &str) -> Option<Field> {
    Some(match header {
        "utilization.gpu" => gauge("DCGM_FI_DEV_GPU_UTIL"),
        "utilization.memory" => gauge("DCGM_FI_DEV_MEM_COPY_UTIL"),
        "utilization.encoder" => gauge("DCGM_FI_DEV_ENC_UTIL"),
        "utilization.decoder" => gauge("DCGM_FI_DEV_DEC_UTIL"),
        "memory.total" => gauge("DCGM_FI_DEV_FB_TOTAL"),
        "memory.used" => gauge("DCGM_FI_DEV_FB_USED"),
        "memory.free" => gauge("DCGM_FI_DEV_FB_FREE"),
        "memory.reserved" => gauge("DCGM_FI_DEV_FB_RESERVED"),
        "power.draw" | "power.draw.average" => gauge("DCGM_FI_DEV_POWER_USAGE"),
        "power.draw.instant" => gauge("DCGM_FI_DEV_POWER_USAGE_INSTANT"),
        "power.limit" => gauge("DCGM_FI_DEV_POWER_MGMT_LIMIT"),
        "enforced.power.limit" => gauge("DCGM_FI_DEV_ENFORCED_POWER_LIMIT"),
        "temperature.gpu" => gauge("DCGM_FI_DEV_GPU_TEMP"),
        "temperature.memory" => gauge("DCGM_FI_DEV_MEMORY_TEMP"),
        "clocks.sm" | "clocks.current.sm" => gauge("DCGM_FI_DEV_SM_CLOCK"),
        "clocks.mem" | "clocks.current.memory" => gauge("DCGM_FI_DEV_MEM_CLOCK"),
        _ => return None,
    })
}

/// `YYYY/MM/DD HH:MM:SS.mmm` (nvidia-smi, local time without zone).
fn smi_timestamp(cell: &str) -> Option<i64> {
    let cell = cell.trim();
    let (date, time) = cell.split_once(' ')?;
    let mut d = date.split(['/', '-']).map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    clock_ms(time.trim()).map(|ms| days_from_civil(y, m, day) * 86_400_000 + ms)
}

/// `HH:MM:SS[.mmm]` as milliseconds since midnight.
fn clock_ms(time: &str) -> Option<i64> {
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (h, mi, s) = (t.next()??, t.next()??, t.next()??);
    let frac_ms = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().chain("000".chars()).take(3).collect();
        digits.parse::<i64>().ok()?
    };
    Some(((h * 60 + mi) * 60 + s) * 1000 + frac_ms)
}

fn nvidia_smi_csv(text: &str, base_ms: Option<i64>, delay_ms: i64) -> Converted {
    let mut out = Converted::default();
    let mut writer = Writer::default();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return out;
    };
    let headers: Vec<String> = header
        .split(',')
        .map(|h| h.trim().split(" [").next().unwrap_or("").trim().to_string())
        .collect();
    let has_average = headers.iter().any(|h| h == "power.draw.average");
    let col = |name: &str| headers.iter().position(|h| h == name);
    let (ts_col, index_col, uuid_col, name_col, bus_col, driver_col) = (
        col("timestamp"),
        col("index"),
        col("uuid"),
        col("name"),
        col("pci.bus_id"),
        col("driver_version"),
    );
    let fields: Vec<Option<Field>> = headers
        .iter()
        .map(|h| {
            if h == "power.draw" && has_average {
                None
            } else {
                csv_field(h)
            }
        })
        .collect();
    let ignored: Vec<&str> = headers
        .iter()
        .enumerate()
        .filter(|(i, h)| {
            fields[*i].is_none()
                && ![ts_col, index_col, uuid_col, name_col, bus_col, driver_col].contains(&Some(*i))
                && !(h.as_str() == "power.draw" && has_average)
        })
        .map(|(_, h)| h.as_str())
        .collect();
    if !ignored.is_empty() {
        out.notes.push(format!(
            "nvidia-smi columns not mapped to DCGM fields: {}",
            ignored.join(", ")
        ));
    }
    if ts_col.is_some() {
        out.notes
            .push("nvidia-smi timestamps are local time without a zone; read as UTC".to_string());
    }
    let mut ticks = Ticks::default();
    for (i, line) in lines {
        let line_no = i as u32 + 1;
        if line.trim_start().starts_with("timestamp") {
            continue; // repeated header
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != headers.len() {
            out.diagnostics.push((
                line_no,
                format!(
                    "expected {} columns, found {}; row skipped",
                    headers.len(),
                    cells.len()
                ),
            ));
            continue;
        }
        let gpu = index_col.map_or_else(|| "0".to_string(), |c| cells[c].to_string());
        let time = match ts_col {
            Some(c) => match smi_timestamp(cells[c]) {
                Some(t) => Some(t),
                None => {
                    out.diagnostics.push((
                        line_no,
                        format!("unreadable timestamp `{}`; row skipped", cells[c]),
                    ));
                    continue;
                }
            },
            None => ticks.time(&gpu, base_ms, delay_ms),
        };
        let mut labels: Vec<(&str, String)> = vec![("gpu", gpu.clone())];
        for (label, c) in [
            ("UUID", uuid_col),
            ("pci_bus_id", bus_col),
            ("device", None),
            ("modelName", name_col),
        ] {
            match (label, c) {
                ("device", _) => labels.push(("device", format!("nvidia{gpu}"))),
                (_, Some(c)) => labels.push((label, cells[c].to_string())),
                _ => {}
            }
        }
        if let Some(c) = driver_col {
            labels.push(("DCGM_FI_DRIVER_VERSION", cells[c].to_string()));
        }
        for (c, field) in fields.iter().enumerate() {
            if let (Some(field), Some(v)) = (field, number(cells[c])) {
                writer.sample(*field, &labels, v, time);
            }
        }
        writer.rows += 1;
    }
    writer.finish(out)
}

fn dmon_field(column: &str) -> Option<Field> {
    Some(match column {
        "pwr" => gauge("DCGM_FI_DEV_POWER_USAGE"),
        "gtemp" | "temp" => gauge("DCGM_FI_DEV_GPU_TEMP"),
        "mtemp" => gauge("DCGM_FI_DEV_MEMORY_TEMP"),
        "sm" => gauge("DCGM_FI_DEV_GPU_UTIL"),
        "mem" => gauge("DCGM_FI_DEV_MEM_COPY_UTIL"),
        "enc" => gauge("DCGM_FI_DEV_ENC_UTIL"),
        "dec" => gauge("DCGM_FI_DEV_DEC_UTIL"),
        "mclk" => gauge("DCGM_FI_DEV_MEM_CLOCK"),
        "pclk" => gauge("DCGM_FI_DEV_SM_CLOCK"),
        "fb" => gauge("DCGM_FI_DEV_FB_USED"),
        "rxpci" => scaled("DCGM_FI_PROF_PCIE_RX_BYTES", 1e6),
        "txpci" => scaled("DCGM_FI_PROF_PCIE_TX_BYTES", 1e6),
        // GPM columns (Hopper+) are percentages; DCGM PROF fields are ratios.
        "gract" => scaled("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.01),
        "smutil" => scaled("DCGM_FI_PROF_SM_ACTIVE", 0.01),
        "smocc" => scaled("DCGM_FI_PROF_SM_OCCUPANCY", 0.01),
        "dram" => scaled("DCGM_FI_PROF_DRAM_ACTIVE", 0.01),
        _ => return None,
    })
}

/// What the two `dmon` readers share: the output, the writer, the header's
/// columns, the tick clock for rows without a time, and the columns no
/// DCGM field maps.
#[derive(Default)]
struct Dmon {
    out: Converted,
    writer: Writer,
    columns: Vec<String>,
    ticks: Ticks,
    unmapped: Vec<String>,
}

impl Dmon {
    /// The non-empty lines, trimmed, with their 1-based numbers.
    fn lines(text: &str) -> impl Iterator<Item = (u32, &str)> {
        text.lines()
            .enumerate()
            .map(|(i, raw)| (i as u32 + 1, raw.trim()))
            .filter(|(_, line)| !line.is_empty())
    }

    /// Skips a row whose cell count does not match the header's.
    fn wrong_width(&mut self, line_no: u32, what: &str, found: usize) {
        self.out.diagnostics.push((
            line_no,
            format!(
                "expected {} {what}, found {found}; row skipped",
                self.columns.len()
            ),
        ));
    }

    /// Notes the unmapped columns (naming `tool`) and how rows were timed.
    fn finish(mut self, tool: &str, time_note: String) -> Converted {
        if !self.unmapped.is_empty() {
            self.out.notes.push(format!(
                "{tool} columns not mapped to DCGM fields: {}",
                self.unmapped.join(", ")
            ));
        }
        self.out.notes.push(time_note);
        self.writer.finish(self.out)
    }
}

fn nvidia_smi_dmon(text: &str, base_ms: Option<i64>, delay_ms: i64) -> Converted {
    let mut dm = Dmon::default();
    for (line_no, line) in Dmon::lines(text) {
        if let Some(rest) = line.strip_prefix('#') {
            let tokens: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
            if tokens
                .first()
                .is_some_and(|t| matches!(t.as_str(), "gpu" | "Date" | "Time"))
            {
                dm.columns = tokens;
            }
            continue;
        }
        let cells: Vec<&str> = line.split_whitespace().collect();
        if dm.columns.is_empty() || cells.len() != dm.columns.len() {
            dm.wrong_width(line_no, "columns", cells.len());
            continue;
        }
        let cell = |name: &str| dm.columns.iter().position(|c| c == name).map(|p| cells[p]);
        let gpu = cell("gpu").unwrap_or("0").to_string();
        let time = match (cell("Date"), cell("Time")) {
            (Some(date), Some(time)) if date.len() == 8 => {
                let (y, m, d) = (
                    date[..4].parse().ok(),
                    date[4..6].parse().ok(),
                    date[6..].parse().ok(),
                );
                match (y, m, d, clock_ms(time)) {
                    (Some(y), Some(m), Some(d), Some(ms)) => {
                        Some(days_from_civil(y, m, d) * 86_400_000 + ms)
                    }
                    _ => {
                        dm.out
                            .diagnostics
                            .push((line_no, "unreadable date/time; row skipped".into()));
                        continue;
                    }
                }
            }
            _ => dm.ticks.time(&gpu, base_ms, delay_ms),
        };
        let labels: Vec<(&str, String)> =
            vec![("gpu", gpu.clone()), ("device", format!("nvidia{gpu}"))];
        dm.writer.row(
            &dm.columns,
            &cells,
            &labels,
            time,
            |column| match column {
                "gpu" | "Date" | "Time" => Column::Skip,
                c => dmon_field(c).map_or(Column::Unmapped, Column::Field),
            },
            &mut dm.unmapped,
        );
    }
    let time_note = if !text.contains("#Date") && !text.contains("# Date") {
        format!(
            "nvidia-smi dmon rows carry no time (run it with -o DT); rows placed {delay_ms} ms apart from the file's time"
        )
    } else {
        "nvidia-smi dmon times are local time without a zone; read as UTC".into()
    };
    dm.finish("nvidia-smi dmon", time_note)
}

fn dcgmi_field(short: &str) -> Option<Field> {
    let name = match short {
        "SMCLK" => "DCGM_FI_DEV_SM_CLOCK",
        "MMCLK" => "DCGM_FI_DEV_MEM_CLOCK",
        "MMTMP" => "DCGM_FI_DEV_MEMORY_TEMP",
        "TMPTR" => "DCGM_FI_DEV_GPU_TEMP",
        "POWER" => "DCGM_FI_DEV_POWER_USAGE",
        "POWINST" => "DCGM_FI_DEV_POWER_USAGE_INSTANT",
        "PMLMT" => "DCGM_FI_DEV_POWER_MGMT_LIMIT",
        "TOTEC" => {
            return Some(Field {
                name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                counter: true,
                scale: 1.0,
            });
        }
        "GPUTL" => "DCGM_FI_DEV_GPU_UTIL",
        "MCUTL" => "DCGM_FI_DEV_MEM_COPY_UTIL",
        "ECUTL" => "DCGM_FI_DEV_ENC_UTIL",
        "DCUTL" => "DCGM_FI_DEV_DEC_UTIL",
        "XIDER" => "DCGM_FI_DEV_XID_ERRORS",
        "PVIOL" => "DCGM_FI_DEV_POWER_VIOLATION",
        "TVIOL" => "DCGM_FI_DEV_THERMAL_VIOLATION",
        "FBTTL" => "DCGM_FI_DEV_FB_TOTAL",
        "FBFRE" => "DCGM_FI_DEV_FB_FREE",
        "FBUSD" => "DCGM_FI_DEV_FB_USED",
        "FBRSV" => "DCGM_FI_DEV_FB_RESERVED",
        "NBWLT" => "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "DVCCTR" => "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "PSTAT" => "DCGM_FI_DEV_PSTATE",
        "GRACT" => "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "SMACT" => "DCGM_FI_PROF_SM_ACTIVE",
        "SMOCC" => "DCGM_FI_PROF_SM_OCCUPANCY",
        "TENSO" => "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "DRAMA" => "DCGM_FI_PROF_DRAM_ACTIVE",
        "FP64A" => "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
        "FP32A" => "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
        "FP16A" => "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
        "PCITX" => "DCGM_FI_PROF_PCIE_TX_BYTES",
        "PCIRX" => "DCGM_FI_PROF_PCIE_RX_BYTES",
        "NVLTX" => "DCGM_FI_PROF_NVLINK_TX_BYTES",
        "NVLRX" => "DCGM_FI_PROF_NVLINK_RX_BYTES",
        "TIMMA" => "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE",
        "THMMA" => "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE",
        "TDFMA" => "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE",
        "INTAC" => "DCGM_FI_PROF_PIPE_INT_ACTIVE",
        _ => return None,
    };
    Some(gauge(name))
}

fn dcgmi_dmon(text: &str, base_ms: Option<i64>, delay_ms: i64) -> Converted {
    let mut dm = Dmon::default();
    for (line_no, line) in Dmon::lines(text) {
        if line.starts_with("#Entity") || line.starts_with("# Entity") {
            dm.columns = line
                .trim_start_matches('#')
                .split_whitespace()
                .skip(1)
                .map(str::to_string)
                .collect();
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let entity_kind = tokens.first().copied().unwrap_or("");
        if !matches!(entity_kind, "GPU" | "GPU-I" | "GPU-CI") {
            // Units row (`ID ...`) and the closing "stopped by a signal" line.
            if entity_kind != "ID" && !line.to_ascii_lowercase().contains("signal") {
                dm.out
                    .diagnostics
                    .push((line_no, "not a dcgmi dmon row; skipped".into()));
            }
            continue;
        }
        let cells = &tokens[2.min(tokens.len())..];
        if tokens.len() < 2 || cells.len() != dm.columns.len() {
            dm.wrong_width(line_no, "values", cells.len());
            continue;
        }
        let entity = format!("{} {}", entity_kind, tokens[1]);
        let time = dm.ticks.time(&entity, base_ms, delay_ms);
        let labels: Vec<(&str, String)> = if entity_kind == "GPU" {
            vec![
                ("gpu", tokens[1].to_string()),
                ("device", format!("nvidia{}", tokens[1])),
            ]
        } else {
            vec![("dcgm_entity", entity.clone())]
        };
        dm.writer.row(
            &dm.columns,
            cells,
            &labels,
            time,
            |column| dcgmi_field(column).map_or(Column::Unmapped, Column::Field),
            &mut dm.unmapped,
        );
    }
    dm.finish(
        "dcgmi dmon",
        format!(
            "dcgmi dmon rows carry no time; ticks placed {delay_ms} ms apart from the file's time (set capture.dmon_delay_ms in the manifest to the -d value)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn nvidia_smi_csv_with_units_and_na() {
        let text = "timestamp, index, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W], temperature.memory\n\
                    2026/03/02 14:05:10.118, 0, NVIDIA L4, GPU-aaa, 96 %, 20814 MiB, 70.12 W, [N/A]\n\
                    2026/03/02 14:05:10.121, 1, NVIDIA L4, GPU-bbb, 0 %, 0 MiB, [Not Supported], N/A\n\
                    broken, row\n";
        let out = convert(Content::NvidiaSmiCsv, text, None, 1000);
        expect![[r#"
            # TYPE DCGM_FI_DEV_FB_USED gauge
            DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-aaa",device="nvidia0",modelName="NVIDIA L4"} 20814 1772460310118
            DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-bbb",device="nvidia1",modelName="NVIDIA L4"} 0 1772460310121
            # TYPE DCGM_FI_DEV_GPU_UTIL gauge
            DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaa",device="nvidia0",modelName="NVIDIA L4"} 96 1772460310118
            DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbb",device="nvidia1",modelName="NVIDIA L4"} 0 1772460310121
            # TYPE DCGM_FI_DEV_POWER_USAGE gauge
            DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaa",device="nvidia0",modelName="NVIDIA L4"} 70.12 1772460310118
        "#]]
        .assert_eq(&out.text);
        assert_eq!(
            out.diagnostics,
            vec![(4, "expected 8 columns, found 2; row skipped".to_string())]
        );
        assert_eq!(out.rows, 2);
    }

    #[test]
    fn nvidia_smi_dmon_with_date_time_and_dashes() {
        let text = "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk  gract\n\
                    #YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %    MHz    MHz  GPM:%\n\
                    20260302    14:05:10      0    188     61      -     93     57   6251   1695   50.0\n";
        let out = convert(Content::NvidiaSmiDmon, text, None, 1000);
        assert!(
            out.text.contains(
                "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",device=\"nvidia0\"} 188 1772460310000\n"
            )
        );
        assert!(
            out.text
                .contains("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",device=\"nvidia0\"} 0.5 ")
        );
        assert!(!out.text.contains("MEMORY_TEMP"), "`-` is absent, not 0");
        assert_eq!(out.rows, 1);
    }

    #[test]
    fn dcgmi_dmon_ticks_from_entity_sequence() {
        let text = "#Entity   GRACT    TENSO    DRAMA    POWER\n\
                    ID                                   W\n\
                    GPU 0     0.734    0.212    0.581    287.415\n\
                    GPU 1     N/A      N/A      N/A      100.000\n\
                    GPU 0     0.700    0.200    0.500    280.000\n\
                    GPU 1     0.100    0.000    0.100    101.000\n\
                    Signal received, dmon stopped\n";
        let out = convert(Content::DcgmiDmon, text, Some(1_000_000), 1000);
        assert!(out.text.contains(
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",device=\"nvidia0\"} 0.734 1000000\n"
        ));
        assert!(
            out.text.contains(
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",device=\"nvidia0\"} 0.7 1001000\n"
            )
        );
        assert!(
            !out.text
                .contains("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",device=\"nvidia1\"} 0 1000000")
        );
        assert_eq!(out.rows, 4);
        assert!(out.diagnostics.is_empty());
    }
}
