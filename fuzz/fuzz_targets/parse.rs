//! The exposition parser on any bytes: never panics, every line number it
//! reports lies within the input, every key is a piece of the input, and a
//! key hint never changes what is read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vllm_lens_core::expo::{Event, Parser};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = text.split('\n').count() as u32;
    let mut plain = Parser::new(&text);
    let mut keys = Vec::new();
    let mut events = Vec::new();
    for event in plain.by_ref() {
        if let Event::Sample(s) = &event {
            assert!(s.line >= 1 && s.line <= lines);
            assert!(text.contains(s.key));
            for label in s.labels.iter() {
                let _ = label.value();
            }
            keys.push((s.key.to_string(), s.shape()));
        }
        events.push(format!("{event:?}"));
    }
    for d in plain.into_diagnostics() {
        assert!(d.line <= lines);
    }
    // The same text again, each line hinted with the key of the line
    // before it (right for repeated series, wrong for all others).
    let mut hinted = Parser::new(&text);
    let mut again = Vec::new();
    let mut i = 0usize;
    loop {
        let hint = keys.get(i.wrapping_sub(1)).map(|(k, s)| (k.as_str(), *s));
        let Some(event) = hinted.next_hinted(hint) else {
            break;
        };
        if matches!(event, Event::Sample(_)) {
            i += 1;
        }
        again.push(format!("{event:?}"));
    }
    assert_eq!(events, again);
});
