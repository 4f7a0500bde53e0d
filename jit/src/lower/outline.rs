//! Transcendentals out of line, for quick code (`docs/compile.md`,
//! "Transcendentals out of line").
//!
//! EX2, LN2, SIN and COS expand to 43–57 Cranelift instructions each
//! ([`super::math`]), and a quick compile pays for every one at every use.
//! Quick code calls one function per operation instead, each compiled once
//! per process, the first time quick code of a program that uses it often
//! needs it, by the same lowering ([`lower_outlined`]): the same
//! instructions on the same operand, so the same bits.

use super::Lowering;
use crate::ir::Unary;
use cranelift_codegen::ir::{AbiParam, InstBuilder, SigRef, Signature, Type, Value, types};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use std::cell::Cell;

/// The operations called out of line.
pub(crate) const OUTLINED: [Unary; 4] = [Unary::Ex2, Unary::Ln2, Unary::Sin, Unary::Cos];

/// Where `op` stands in [`OUTLINED`], if it is called out of line.
pub(crate) fn outlined_index(op: Unary) -> Option<usize> {
    OUTLINED.iter().position(|&o| o == op)
}

/// Where a lowering gets the outlined functions (compiled code that lives
/// as long as the process, with [`outlined_signature`]), and which of them
/// the program uses often enough to compile.
#[derive(Clone, Copy)]
pub(crate) struct OutlinedSource {
    /// The address of the function of `op` (one of [`OUTLINED`]): compiled
    /// already, or compiled now where asked to (`true`); `None` otherwise,
    /// or where it could not be compiled (the lowering then makes that
    /// operation inline).
    pub(crate) get: fn(Unary, bool) -> Option<usize>,
    /// Per operation of [`OUTLINED`], whether to compile its function
    /// where no quick code has yet.
    pub(crate) worth: [bool; 4],
}

thread_local! {
    /// The source of outlined functions for lowerings on this thread
    /// ([`outlining`]).
    static SOURCE: Cell<Option<OutlinedSource>> = const { Cell::new(None) };
}

/// Until the returned guard is dropped, lowerings on this thread call the
/// functions of `source` (quick code) or make every transcendental inline
/// (`None`).
pub(crate) fn outlining(source: Option<OutlinedSource>) -> OutliningGuard {
    OutliningGuard(SOURCE.replace(source))
}

/// Puts back the previous [`outlining`] when dropped.
pub(crate) struct OutliningGuard(Option<OutlinedSource>);

impl Drop for OutliningGuard {
    fn drop(&mut self) {
        SOURCE.set(self.0);
    }
}

/// How a lowering makes EX2, LN2, SIN and COS.
#[derive(Clone, Copy)]
pub(super) enum Outline {
    /// Inline.
    Inline,
    /// Calls to the functions of this source (where it has them), with
    /// this signature once imported into the function.
    Calls(OutlinedSource, Option<SigRef>),
}

impl Outline {
    /// What lowerings on this thread do now ([`outlining`]).
    pub(super) fn now() -> Outline {
        SOURCE
            .get()
            .map_or(Outline::Inline, |source| Outline::Calls(source, None))
    }
}

/// The signature of an outlined function.
pub(crate) fn outlined_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(types::F32X4));
    sig.returns.push(AbiParam::new(types::F32X4));
    sig
}

/// Builds into `b` (a function with [`outlined_signature`]) the body of
/// `op`, one of [`OUTLINED`], on its flushed operand.
pub(crate) fn lower_outlined(b: &mut FunctionBuilder<'_>, op: Unary, ptr: Type, cc: CallConv) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let x = b.block_params(entry)[0];
    // No machine state: the operations read their operand and constants.
    let none = b.ins().iconst(ptr, 0);
    let al = b.ins().iconst(types::I32, 0);
    let mut l = Lowering::new(b, 1, ptr, cc, [none; 3], (0, al), None);
    l.outline = Outline::Inline;
    let r = l.inline_transcendental(op, x);
    l.b.ins().return_(&[r]);
    l.b.seal_all_blocks();
}

impl Lowering<'_, '_> {
    /// `op` (EX2, LN2, SIN or COS) of a flushed `x`: a call where this
    /// lowering calls them out of line, else inline.
    pub(super) fn transcendental(&mut self, op: Unary, x: Value) -> Value {
        let Outline::Calls(source, sig) = self.outline else {
            return self.inline_transcendental(op, x);
        };
        let k = outlined_index(op).expect("an outlined operation");
        let Some(addr) = (source.get)(op, source.worth[k]) else {
            return self.inline_transcendental(op, x);
        };
        let sig = sig.unwrap_or_else(|| {
            let cc = self.b.func.signature.call_conv;
            let sig = self.b.import_signature(outlined_signature(cc));
            self.outline = Outline::Calls(source, Some(sig));
            sig
        });
        let addr = self.b.ins().iconst(self.ptr, addr as i64);
        let call = self.b.ins().call_indirect(sig, addr, &[x]);
        self.b.inst_results(call)[0]
    }

    /// `op` of a flushed `x`, its instructions here.
    fn inline_transcendental(&mut self, op: Unary, x: Value) -> Value {
        match op {
            Unary::Ex2 => self.ex2(x),
            Unary::Ln2 => self.ln2(x),
            Unary::Sin => self.sincos(x, false),
            Unary::Cos => self.sincos(x, true),
            _ => unreachable!("not outlined: {op:?}"),
        }
    }
}
