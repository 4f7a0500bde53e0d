//! cargo-fuzz target: `ctm::fuzz::Target::Shader` (see `src/fuzz/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(message) = ctm::fuzz::Target::Shader.check(data) {
        panic!("{message}");
    }
});
