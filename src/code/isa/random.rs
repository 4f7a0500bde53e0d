//! Random valid instructions, generated from the encoding table.
//!
//! Every field gets a value from its table domain (any number of its width,
//! or one of the defined enumeration values; reserved bits stay 0), then the
//! cross-field rule of §4.3 (no `REL` on inline constants) is applied. The
//! randomness comes from the caller, so property-test frameworks and seeded
//! fuzzers can drive it alike.

use super::inst::*;
use super::layout::Domain;
use super::table::*;

/// A random valid instruction; `next` supplies random 32-bit values.
///
/// ```
/// let mut state = 1u32;
/// let mut next = || { state ^= state << 13; state ^= state >> 17; state ^= state << 5; state };
/// for _ in 0..100 {
///     let inst = ctm::isa::random::random_inst(&mut next);
///     let words = inst.encode().unwrap();
///     assert_eq!(ctm::isa::Inst::decode(words), Ok(inst));
/// }
/// ```
pub fn random_inst(next: &mut impl FnMut() -> u32) -> Inst {
    let ty = InstType::ALL[next() as usize % InstType::ALL.len()];
    let mut inst = Inst::zeroed(ty);
    for slot in inst.slots() {
        for (index, info) in slot.fields.iter().enumerate() {
            if slot.index == 0 && info.name == "TYPE" {
                continue;
            }
            let raw = match info.domain {
                Domain::Flag => next() & 1,
                Domain::Uint => next() & (info.mask() >> info.lo),
                Domain::Enum(values) => values[next() as usize % values.len()].0,
            };
            inst.set_field(slot.index, index, raw)
                .expect("value from the field's domain");
        }
    }
    if let Body::Alu(a) = &mut inst.body {
        for addr in [&mut a.rgb_addr, &mut a.alpha_addr] {
            for k in 0..3 {
                let mut src = addr.src(k);
                if matches!(src.kind, SrcKind::Inline(_)) {
                    src.rel = false;
                    addr.set_src(k, src);
                }
            }
        }
    }
    inst
}
