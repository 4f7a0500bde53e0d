//! cargo-fuzz target: `ctm::fuzz::Target::Asm` (see `src/fuzz/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(message) = ctm::fuzz::Target::Asm.check(data) {
        panic!("{message}");
    }
});
