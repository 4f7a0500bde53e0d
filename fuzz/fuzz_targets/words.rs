//! cargo-fuzz target: `ctm::fuzz::Target::Words` (see `src/fuzz/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(message) = ctm::fuzz::Target::Words.check(data) {
        panic!("{message}");
    }
});
