//! cargo-fuzz target: `ctm::fuzz::Target::Ir` (see `src/fuzz/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(message) = ctm::fuzz::Target::Ir.check(data) {
        panic!("{message}");
    }
});
