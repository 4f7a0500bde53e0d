//! cargo-fuzz target: `ctm::fuzz::Target::Program` (see `src/fuzz/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(message) = ctm::fuzz::Target::Program.check(data) {
        panic!("{message}");
    }
});
