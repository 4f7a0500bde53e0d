//! cargo-fuzz target: `ctm_tools::fuzz::Target::Ir` (see `tools/src/fuzz/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(message) = ctm_tools::fuzz::Target::Ir.check(data) {
        panic!("{message}");
    }
});
