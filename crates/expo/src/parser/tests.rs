//! Unit tests of the line parser, in the `check(input, expect)` style.

use expect_test::{Expect, expect};

use crate::{Event, Parser};

/// Renders what the parser read as one line per event, then diagnostics.
fn render(input: &str) -> String {
    let mut parser = Parser::new(input);
    let mut out = String::new();
    for event in parser.by_ref() {
        match event {
            Event::Help { name, text, line } => out += &format!("{line}: HELP {name} {text:?}\n"),
            Event::Type { name, kind, line } => out += &format!("{line}: TYPE {name} {kind}\n"),
            Event::Unit { name, unit, line } => out += &format!("{line}: UNIT {name} {unit}\n"),
            Event::Sample(s) => {
                let labels: Vec<String> = s
                    .labels
                    .iter()
                    .map(|l| format!("{}={:?}", l.name, l.value()))
                    .collect();
                out += &format!(
                    "{}: {} [{}] {:?} ts={:?}\n",
                    s.line,
                    s.name,
                    labels.join(" "),
                    s.value,
                    s.timestamp_ms
                );
            }
        }
    }
    for d in parser.into_diagnostics() {
        out += &format!("! {d}\n");
    }
    out
}

#[track_caller]
fn check(input: &str, expect: Expect) {
    expect.assert_eq(&render(input));
}

#[test]
fn plain_gauge_with_labels() {
    check(
        r#"# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen2.5-3B-Instruct"} 8.0
"#,
        expect![[r#"
            1: HELP vllm:num_requests_running "Number of requests in model execution batches."
            2: TYPE vllm:num_requests_running gauge
            3: vllm:num_requests_running [engine="0" model_name="Qwen/Qwen2.5-3B-Instruct"] 8.0 ts=None
        "#]],
    );
}

#[test]
fn float_forms_of_prometheus_client() {
    check(
        "a 1.17e+010\nb 1.17e+10\nc NaN\nd +Inf\ne -Inf\nf 3.5e-05\ng 1.73315520025e+09\nh 0.30000000000000004\n",
        expect![[r#"
            1: a [] 11700000000.0 ts=None
            2: b [] 11700000000.0 ts=None
            3: c [] NaN ts=None
            4: d [] inf ts=None
            5: e [] -inf ts=None
            6: f [] 3.5e-5 ts=None
            7: g [] 1733155200.25 ts=None
            8: h [] 0.30000000000000004 ts=None
        "#]],
    );
}

#[test]
fn label_values_with_escapes_and_punctuation() {
    check(
        r#"DCGM_FI_DEV_XID_ERRORS{gpu="0",modelName="NVIDIA A10G",err_code="79",err_msg="GPU has fallen off the bus (reset, reboot)",q="a\"b\\c\nd",u="Grüße, 世界"} 79
"#,
        expect![[r#"
            1: DCGM_FI_DEV_XID_ERRORS [gpu="0" modelName="NVIDIA A10G" err_code="79" err_msg="GPU has fallen off the bus (reset, reboot)" q="a\"b\\c\nd" u="Grüße, 世界"] 79.0 ts=None
        "#]],
    );
}

#[test]
fn timestamps_in_both_formats() {
    check(
        "x{a=\"1\"} 5 1767225600123\n",
        expect![[r#"
        1: x [a="1"] 5.0 ts=Some(1767225600123)
    "#]],
    );
    check(
        "# TYPE x gauge\nx 5 1767225600.123\n# EOF\n",
        expect![[r#"
        1: TYPE x gauge
        2: x [] 5.0 ts=Some(1767225600123)
    "#]],
    );
    // `# EOF` not last: the format is only settled at the first timestamp,
    // by a scan that still finds it (seconds, not milliseconds).
    check(
        "x 5 1767225600.5
# EOF
late 1 2
",
        expect![[r#"
        1: x [] 5.0 ts=Some(1767225600500)
        ! line 3: content after `# EOF` ignored
    "#]],
    );
}

#[test]
fn openmetrics_exemplars_and_eof() {
    check(
        "# TYPE foo counter\n# UNIT foo seconds\nfoo_total 17.0 # {trace_id=\"abc\"} 1.0 1520879607.789\nfoo_created 1520430000.123\n# EOF\nlate 1\n",
        expect![[r#"
            1: TYPE foo counter
            2: UNIT foo seconds
            3: foo_total [] 17.0 ts=None
            4: foo_created [] 1520430000.123 ts=None
            ! line 6: content after `# EOF` ignored
        "#]],
    );
}

#[test]
fn crlf_blank_lines_and_trailing_comma() {
    check(
        "a{x=\"1\",} 1\r\n\r\n  \r\nb 2\r\n",
        expect![[r#"
        1: a [x="1"] 1.0 ts=None
        4: b [] 2.0 ts=None
    "#]],
    );
}

#[test]
fn promtool_dump_and_quoted_names() {
    check(
        "{__name__=\"up\", instance=\"h:9400\", job=\"dcgm\"} 1 1767225600000\n{\"my.metric\", a=\"b\"} 2\n",
        expect![[r#"
            1: up [instance="h:9400" job="dcgm"] 1.0 ts=Some(1767225600000)
            2: my.metric [a="b"] 2.0 ts=None
        "#]],
    );
}

#[test]
fn junk_lines_are_reported_and_skipped() {
    check(
        "```\n  % Total    % Received % Xferd\n100  1234  100  1234\nok 1\nbad{a=\"1\" 2\nbad2{a=1} 2\nnovalue\nbadvalue abc\nbadts 1 12.5\nextra 1 2 3\n# TYPE t wibble\n",
        expect![[r#"
            4: ok [] 1.0 ts=None
            11: TYPE t untyped
            ! line 1: not a metric line (expected a metric name, `{` or `#`); skipped
            ! line 2: not a metric line (expected a metric name, `{` or `#`); skipped
            ! line 3: not a metric line (expected a metric name, `{` or `#`); skipped
            ! line 5: malformed labels: expected `,` or `}` after a label; line skipped
            ! line 6: malformed labels: label value must be a quoted string; line skipped
            ! line 7: missing or invalid sample value; line skipped
            ! line 8: missing or invalid sample value; line skipped
            ! line 9: invalid timestamp; line skipped
            ! line 10: unexpected text after the sample; line skipped
            ! line 11: unknown metric type `wibble`; family read as untyped
        "#]],
    );
}

#[test]
fn families_without_samples() {
    check(
        "# HELP vllm:num_requests_swapped Number of requests swapped to CPU.\n# TYPE vllm:num_requests_swapped gauge\n",
        expect![[r#"
            1: HELP vllm:num_requests_swapped "Number of requests swapped to CPU."
            2: TYPE vllm:num_requests_swapped gauge
        "#]],
    );
}

#[test]
fn diagnostics_are_capped() {
    let input = "junk\n".repeat(250);
    let diags = Parser::new(&input).max_diagnostics(3).collect_diagnostics();
    assert_eq!(diags.len(), 4);
    assert_eq!(
        diags[3].to_string(),
        "line 250: 247 further diagnostics not shown"
    );
}

impl Parser<'_> {
    fn collect_diagnostics(mut self) -> Vec<crate::Diagnostic> {
        for _ in self.by_ref() {}
        self.into_diagnostics()
    }
}

#[test]
fn never_panics_on_odd_bytes() {
    for input in [
        "{",
        "}",
        "{\"",
        "{\"\\",
        "a{",
        "a{b",
        "a{b=",
        "a{b=\"",
        "a{b=\"\\",
        "a{b=\"c\"",
        "a{b=\"c\"}",
        "a{b=\"c\"} ",
        "# HELP",
        "# TYPE a",
        "#",
        "a 1 ",
        "\u{2028} 1",
        "a\u{0} 1",
        "{__name__=\"\"} 1",
    ] {
        let _ = render(input);
    }
}
