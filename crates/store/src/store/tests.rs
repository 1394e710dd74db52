//! Unit tests of the store: family resolution, roles, target labels,
//! ordering and duplicates.

use expect_test::{Expect, expect};

use crate::{Store, TargetKind};

/// Ingests scrapes (time, text) of one target and dumps families and series.
fn dump(scrapes: &[(i64, &str)]) -> String {
    let mut store = Store::default();
    let t = store.add_target("t", TargetKind::Other, &[("pod", "p-0")]);
    for (time, text) in scrapes {
        store.ingest(t, text, Some(*time));
    }
    store.finish();
    let mut out = String::new();
    for family in store.families() {
        out += &format!(
            "{} {} ({} series)\n",
            family.name(),
            family.kind(),
            family.series().len()
        );
        for &id in family.series() {
            let s = store.series(id);
            let labels: Vec<String> = store.labels(id).map(|(k, v)| format!("{k}={v}")).collect();
            out += &format!(
                "  {} {:?} {{{}}} {:?} {:?}\n",
                store.series_name(id),
                s.role(),
                labels.join(","),
                s.times(),
                s.values()
            );
        }
    }
    for w in store.warnings() {
        out += &format!("! {w}\n");
    }
    out
}

#[track_caller]
fn check(scrapes: &[(i64, &str)], expect: Expect) {
    expect.assert_eq(&dump(scrapes));
}

#[test]
fn prometheus_client_counter_with_created_gauge() {
    check(
        &[(
            1000,
            "# TYPE c_total counter\nc_total{a=\"1\"} 3.0\n# TYPE c_created gauge\nc_created{a=\"1\"} 1.7e9\n",
        )],
        expect![[r#"
            c_total counter (1 series)
              c_total Total {a=1,instance=t,job=other,pod=p-0} [1000] [3.0]
            c_created gauge (1 series)
              c_created Created {a=1,instance=t,job=other,pod=p-0} [1000] [1700000000.0]
        "#]],
    );
}

#[test]
fn openmetrics_counter_family_without_total() {
    check(
        &[(
            1000,
            "# TYPE c counter\nc_total 3\nc_created 1.7e9\n# EOF\n",
        )],
        expect![[r#"
            c counter (2 series)
              c_total Total {instance=t,job=other,pod=p-0} [1000] [3.0]
              c_created Created {instance=t,job=other,pod=p-0} [1000] [1700000000.0]
        "#]],
    );
}

#[test]
fn histogram_lines_in_multiprocess_order() {
    check(
        &[(
            1000,
            "# TYPE h histogram\nh_sum 2.5\nh_bucket{le=\"1.0\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n",
        )],
        expect![[r#"
            h histogram (4 series)
              h_sum Sum {instance=t,job=other,pod=p-0} [1000] [2.5]
              h_bucket Bucket {instance=t,job=other,le=1.0,pod=p-0} [1000] [1.0]
              h_bucket Bucket {instance=t,job=other,le=+Inf,pod=p-0} [1000] [2.0]
              h_count Count {instance=t,job=other,pod=p-0} [1000] [2.0]
        "#]],
    );
}

#[test]
fn summary_and_untyped_and_empty_family() {
    check(
        &[(
            1000,
            "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_count 3\ns_sum 4\nfree 7\n# HELP e empty\n# TYPE e gauge\n",
        )],
        expect![[r#"
            s summary (3 series)
              s Quantile {instance=t,job=other,pod=p-0,quantile=0.5} [1000] [1.0]
              s_count Count {instance=t,job=other,pod=p-0} [1000] [3.0]
              s_sum Sum {instance=t,job=other,pod=p-0} [1000] [4.0]
            free untyped (1 series)
              free Value {instance=t,job=other,pod=p-0} [1000] [7.0]
            e gauge (0 series)
        "#]],
    );
}

#[test]
fn conflicting_target_label_is_exported() {
    check(
        &[(1000, "g{pod=\"vllm-0\",gpu=\"0\"} 1\n")],
        expect![[r#"
            g untyped (1 series)
              g Value {exported_pod=vllm-0,gpu=0,instance=t,job=other,pod=p-0} [1000] [1.0]
        "#]],
    );
}

#[test]
fn label_order_and_escapes_do_not_split_series() {
    check(
        &[
            (1000, "g{a=\"1\",b=\"x\\\"y\"} 1\n"),
            (2000, "g{b=\"x\\\"y\",a=\"1\"} 2\n"),
        ],
        expect![[r#"
            g untyped (1 series)
              g Value {a=1,b=x"y,instance=t,job=other,pod=p-0} [1000, 2000] [1.0, 2.0]
        "#]],
    );
}

#[test]
fn out_of_order_scrapes_are_sorted_and_duplicates_dropped() {
    check(
        &[
            (3000, "g 3\n"),
            (1000, "g 1\n"),
            (2000, "g 2\n"),
            (2000, "g 2.5\n"),
        ],
        expect![[r#"
            g untyped (1 series)
              g Value {instance=t,job=other,pod=p-0} [1000, 2000, 3000] [1.0, 2.5, 3.0]
            ! 1 points repeat a series at a time already seen; the last one read was kept
        "#]],
    );
}

#[test]
fn own_timestamps_win_over_the_scrape_time() {
    check(
        &[(9000, "g 1 1000\ng 2 2000\nh 5\n")],
        expect![[r#"
            g untyped (1 series)
              g Value {instance=t,job=other,pod=p-0} [1000, 2000] [1.0, 2.0]
            h untyped (1 series)
              h Value {instance=t,job=other,pod=p-0} [9000] [5.0]
        "#]],
    );
}

#[test]
fn series_limit_bounds_memory() {
    let mut store = Store::with_limits(crate::Limits { max_series: 2 });
    let t = store.add_target("t", TargetKind::Other, &[]);
    store.ingest(t, "a 1\nb 1\nc 1\nd 1\n", Some(0));
    store.finish();
    assert_eq!(store.all_series().len(), 2);
    assert_eq!(
        store.warnings()[0].to_string(),
        "more than 2 distinct series (a cardinality bomb?): 2 samples of further series were dropped"
    );
}

#[test]
fn type_conflicts_are_reported_once() {
    check(
        &[
            (1000, "# TYPE x counter\nx 1\n"),
            (2000, "# TYPE x gauge\nx 2\n"),
            (3000, "# TYPE x gauge\nx 3\n"),
        ],
        expect![[r#"
            x counter (1 series)
              x Value {instance=t,job=other,pod=p-0} [1000, 2000, 3000] [1.0, 2.0, 3.0]
            ! family `x` is declared both counter and gauge; read as counter
        "#]],
    );
}

#[test]
fn series_keep_their_points_when_the_order_of_lines_changes() {
    // The key cache predicts the n-th line from the last scrape: reordered,
    // new, vanished and repeated lines must still land on their own series.
    check(
        &[
            (1000, "a 1\nb 2\nc 3\n"),
            (2000, "b 20\na 10\nc 30\n"),
            (3000, "c 300\nd 400\n"),
            (4000, "a 1000\nb 2000\nc 3000\nd 4000\n"),
        ],
        expect![[r#"
            a untyped (1 series)
              a Value {instance=t,job=other,pod=p-0} [1000, 2000, 4000] [1.0, 10.0, 1000.0]
            b untyped (1 series)
              b Value {instance=t,job=other,pod=p-0} [1000, 2000, 4000] [2.0, 20.0, 2000.0]
            c untyped (1 series)
              c Value {instance=t,job=other,pod=p-0} [1000, 2000, 3000, 4000] [3.0, 30.0, 300.0, 3000.0]
            d untyped (1 series)
              d Value {instance=t,job=other,pod=p-0} [3000, 4000] [400.0, 4000.0]
        "#]],
    );
}

#[test]
fn same_bytes_is_equality() {
    let cases = [
        "",
        "a",
        "abcdefgh",
        "abcdefghi",
        "vllm:x{engine=\"0\",le=\"0.5\"}",
    ];
    for a in cases {
        for b in cases {
            assert_eq!(
                vllm_lens_expo::same_bytes(a.as_bytes(), b.as_bytes()),
                a == b,
                "{a:?} {b:?}"
            );
        }
    }
    assert!(!vllm_lens_expo::same_bytes(b"abcdefgh1", b"abcdefgh2"));
    assert!(!vllm_lens_expo::same_bytes(b"1bcdefgh1", b"2bcdefgh1"));
}
