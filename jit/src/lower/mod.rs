//! Lowering of one clause ([`crate::ir::Clause`]) to a Cranelift function
//! (`docs/design.md`, "The data path"; numeric rules in [`math`]).
//!
//! The function has the signature [`crate::state::ClauseFn`]. It walks the
//! present quads of the group in batches of `w` quads (1, 2, 4, or the
//! whole group of [`GROUP_QUADS`](crate::state::GROUP_QUADS)): every IR
//! value becomes `w` F32X4 vectors, one per quad (SoA, lane `l` of a vector =
//! lane `l` of the quad). Per batch:
//!
//! * if no lane of the batch can write (`running & active`, or `running`
//!   when an operation also writes inactive lanes), the batch is skipped;
//! * lane masks (running, active, killed, predicate bits, ALU result) are
//!   read from the [`Lanes`](crate::state::Lanes) bit masks into I32X4 lane
//!   masks, updated as operations run, and written back at the end;
//! * register and output writes blend the new value into the old one under
//!   the gate's mask (`bitselect`);
//! * fetches and uncached writes store their operands into
//!   [`Io`](crate::state::Io), call the host once for the batch and read the
//!   fetched channels back.
//!
//! Uniform values (constants, `aL`) are computed once before the loop.
//! Clauses with fetches or uncached writes always run whole groups (`w` =
//! `GROUP_QUADS`): the host then sees each operation once per group, in the same order
//! and with the same lanes as the interpreter, so memory effects and faults
//! are identical.

mod clause;
mod driver;
mod elements;
mod fetch;
mod gather;
mod hash;
mod lazy;
mod masks;
mod math;
mod order;
mod outline;
mod region;
mod shape;
mod strip;
mod strip_loop;
mod umrt;
mod uniforms;
mod values;
mod walk;

use crate::ir::InputForm;
use crate::state::{GROUP_LANES, GROUP_QUADS, io_offsets, offsets};
pub(crate) use clause::{inline_clause, lower_clause};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{
    AbiParam, Block, InstBuilder, MemFlagsData, SigRef, Signature, Type, Value, types,
};
use cranelift_frontend::FunctionBuilder;
pub(crate) use driver::{Body as DriverBody, lower_loop};
pub(crate) use outline::{
    OutlinedSource, lower_outlined, outlined_index, outlined_signature, outlining,
};
pub(crate) use region::lower_lanewise;
pub(crate) use shape::{
    batch_quads, direct_inputs, has_full_body, kills, lookups_of, needs_whole_group,
    region_looks_up, writes_inactive,
};
pub(crate) use strip::{lower_strip, strip_batch};
pub(crate) use walk::eligible as full_walk;

use masks::Masks;
use std::cell::Cell;

thread_local! {
    /// The instruction being lowered on this thread, for the report of a
    /// lowering that panics.
    static AT: Cell<Option<u16>> = const { Cell::new(None) };
}

/// Notes that the lowering is at instruction `pc`.
pub(crate) fn lowering_at(pc: u16) {
    AT.set(Some(pc));
}

/// The instruction the lowering last noted, cleared.
pub(crate) fn take_lowering_at() -> Option<u16> {
    AT.take()
}

/// Bytes of one channel of one quad.
const QUAD_BYTES: i32 = 16;
/// Bytes of one channel across a group.
const CHAN_BYTES: i32 = (GROUP_LANES * 4) as i32;
/// Bytes of one temporary (four channels).
const REG_BYTES: i32 = 4 * CHAN_BYTES;

/// A lowered IR value: one vector per quad of the batch.
#[derive(Clone, Copy)]
struct Val {
    q: [Value; GROUP_QUADS],
}

/// Map of the first CLIF instruction emitted for each DPP instruction, for
/// annotated printing.
pub(crate) type PcMarks = Vec<(cranelift_codegen::ir::Inst, u16)>;

/// State of one clause's lowering.
pub(crate) struct Lowering<'a, 'f> {
    b: &'a mut FunctionBuilder<'f>,
    w: usize,
    ptr: Type,
    lanes: Value,
    uni: Value,
    io: Value,
    /// Per batch: `lanes + 16·q0`, `io + 16·q0`, and the first lane
    /// `4·q0` (also the shift of the batch's bits in a mask word).
    base: Value,
    io_base: Value,
    lane0: Value,
    al: Value,
    vals: Vec<Option<Val>>,
    /// How each value's vectors relate to it ([`lazy`]).
    lazy: Vec<lazy::Lazy>,
    /// Values made once per path ([`values::Memo`]).
    memo: values::Memos,
    masks: Option<Masks>,
    host_sig: SigRef,
    /// Where a failed runtime call goes (one I32 parameter: its status),
    /// and whether the code has such a call.
    err: Block,
    err_used: bool,
    marks: PcMarks,
    /// 1.0 in every lane, loaded from `Io::one` (see [`math`]) once used:
    /// [`Lowering::one`].
    one: Option<Value>,
    /// The running and active words the batch loop tested and their
    /// intersection, for the masks of the batch it runs (set inside a
    /// clause's batch loop alone).
    batch_bits: Option<[Value; 3]>,
    /// The bits of values defined by `Op::Imm`.
    imm: Vec<Option<u32>>,
    /// Values defined as the negation (`Unary::Neg`) of another.
    neg: Vec<Option<crate::ir::V>>,
    /// Values that are `x + K` for an immediate `K` a zero test may move
    /// to the other side ([`walk`]'s `truth`): `(x, K)`.
    shifted: Vec<Option<(crate::ir::V, u32)>>,
    /// How lookups reach memory.
    lookups: Lookups,
    /// What lookups may assume of each input's elements.
    forms: [InputForm; 16],
    /// Every lane is a whole quad's, inside the domain, with no lane state
    /// behind it (a strip): no helper lanes.
    whole: bool,
    /// The batch's helper lanes per quad, where read once for the whole
    /// batch (a lane-wise loop's iterations: [`fetch`]'s `helpers`).
    helpers: Option<Vec<Value>>,
    /// `Program::uncached_unorm`, for a clause's uncached writes ([`umrt`]).
    uncached_unorm: Option<bool>,
    /// How EX2, LN2, SIN and COS are made (quick code calls them:
    /// [`outline`]).
    outline: outline::Outline,
}

/// Which bodies a clause's function has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    /// Per batch: the full-batch body when every lane of the batch is
    /// running and active (and the clause has one), else the general body.
    Both,
    /// Only the full-batch body: the caller guarantees that every live
    /// batch is full (`crate::compile::FullBatches::fits`).
    Full,
    /// Only the general body.
    General,
}

/// How a clause's lookups reach memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookups {
    /// Each lookup looks at its input's descriptor: memory read directly
    /// where the runtime handed one over, else through the runtime; whole
    /// groups.
    Either,
    /// The caller guarantees a descriptor for every input the clause looks
    /// up ([`direct_inputs`]), none of them a 2×2 gather: memory read
    /// directly, batches of any width.
    Direct,
    /// As [`Lookups::Direct`], but a descriptor may be a one-channel 2×2
    /// gather, which the code tests for (a body compiled the first time a
    /// run binds such an input).
    Gathered,
    /// Every lookup through the runtime; whole groups.
    Host,
}

impl<'a, 'f> Lowering<'a, 'f> {
    /// A lowering into `b` (whose current block is the function's entry)
    /// for batches of `w` quads, with `values` IR values, the machine state
    /// at `lanes`, `uni`, `io` and `aL` = `al`.
    fn new(
        b: &'a mut FunctionBuilder<'f>,
        w: usize,
        ptr: Type,
        call_conv: cranelift_codegen::isa::CallConv,
        [lanes, uni, io]: [Value; 3],
        (values, al): (u32, Value),
        err: Option<Block>,
    ) -> Self {
        let mut sig = Signature::new(call_conv);
        sig.params.push(AbiParam::new(ptr));
        for _ in 0..4 {
            sig.params.push(AbiParam::new(types::I32));
        }
        sig.returns.push(AbiParam::new(types::I32));
        let host_sig = b.import_signature(sig);
        let err = err.unwrap_or_else(|| {
            let err = b.create_block();
            b.append_block_param(err, types::I32);
            err
        });
        Lowering {
            b,
            w,
            ptr,
            lanes,
            uni,
            io,
            base: lanes,
            io_base: io,
            lane0: al,
            al,
            vals: vec![None; values as usize],
            lazy: vec![lazy::Lazy::No; values as usize],
            memo: values::Memos::default(),
            masks: None,
            host_sig,
            err,
            err_used: false,
            marks: Vec::new(),
            one: None,
            batch_bits: None,
            imm: vec![None; values as usize],
            neg: vec![None; values as usize],
            shifted: vec![None; values as usize],
            lookups: Lookups::Either,
            forms: [InputForm::default(); 16],
            whole: false,
            helpers: None,
            uncached_unorm: None,
            outline: outline::Outline::now(),
        }
    }
}

impl Lowering<'_, '_> {
    /// Starts the loop over the group's batches, `quads` present quads in
    /// steps of `w` (`ptr`: the pointer type): `head(q0)` goes on to the
    /// batch's code (the current block on return, with the batch's bases
    /// and first lane set) while `q0 < quads`, else to the returned exit
    /// block. Returns (head, exit, `q0 + w`, the byte offset of the batch's
    /// first quad).
    fn batch_loop(&mut self, quads: Value, ptr: Type) -> (Block, Block, Value, Value) {
        let exit = self.b.create_block();
        let (head, next, off) = self.batch_loop_to(quads, ptr, exit);
        (head, exit, next, off)
    }

    /// [`Self::batch_loop`] leaving by `exit`.
    fn batch_loop_to(&mut self, quads: Value, ptr: Type, exit: Block) -> (Block, Value, Value) {
        let head = self.b.create_block();
        self.b.append_block_param(head, types::I32);
        let zero = self.b.ins().iconst(types::I32, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let q0 = self.b.block_params(head)[0];
        let body = self.b.create_block();
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, q0, quads);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        self.lane0 = self.b.ins().imul_imm_s(q0, 4);
        let next = self.b.ins().iadd_imm_s(q0, self.w as i64);
        let off = self.b.ins().imul_imm_s(q0, i64::from(QUAD_BYTES));
        let off = self.b.ins().uextend(ptr, off);
        self.base = self.b.ins().iadd(self.lanes, off);
        self.io_base = self.b.ins().iadd(self.io, off);
        (head, next, off)
    }

    /// Ends the function: `exit` returns 0, the error block the status it
    /// was handed; seals every block.
    fn finish(&mut self, exit: Block) {
        self.b.switch_to_block(exit);
        let ok = self.b.ins().iconst(types::I32, 0);
        self.b.ins().return_(&[ok]);
        // No runtime call, no failure to return.
        if self.err_used {
            self.b.switch_to_block(self.err);
            let status = self.b.block_params(self.err)[0];
            self.b.ins().return_(&[status]);
        }
        self.b.seal_all_blocks();
    }

    /// Where the code of the next node, instruction `pc`'s, will start
    /// (see [`Self::mark_end`]).
    fn mark_start(&self, pc: u16) -> (Block, Option<cranelift_codegen::ir::Inst>) {
        lowering_at(pc);
        let block = self.b.current_block().expect("in a block");
        (block, self.b.func.layout.last_inst(block))
    }

    /// Records the first instruction emitted since `start` as the start of
    /// instruction `pc`'s code, for annotated printing.
    fn mark_end(&mut self, (block, before): (Block, Option<cranelift_codegen::ir::Inst>), pc: u16) {
        let first = match before {
            Some(inst) => self.b.func.layout.next_inst(inst),
            None => self.b.func.layout.first_inst(block),
        };
        if let Some(inst) = first
            && self.marks.last().is_none_or(|m| m.1 != pc)
        {
            self.marks.push((inst, pc));
        }
    }

    fn set(&mut self, v: crate::ir::V, q: [Value; GROUP_QUADS]) {
        self.vals[v.0 as usize] = Some(Val { q });
    }

    fn get(&self, v: crate::ir::V) -> Val {
        self.vals[v.0 as usize].expect("the IR verifier guarantees definition before use")
    }

    /// Pointer and offset of channel `chan` of temporary `index`, quad 0 of
    /// the batch.
    fn temp_addr(&mut self, index: crate::ir::Index, chan: u8) -> (Value, i32) {
        let chan_off = i32::from(chan) * CHAN_BYTES + offsets::TEMPS as i32;
        if index.rel {
            let off = self.rel_offset(index, crate::ir::TEMPS as i64, i64::from(REG_BYTES));
            (self.b.ins().iadd(self.base, off), chan_off)
        } else {
            (self.base, i32::from(index.base) * REG_BYTES + chan_off)
        }
    }

    fn load_vec(&mut self, p: Value, off: i32, k: usize) -> Value {
        let at = Offset32::new(off + k as i32 * QUAD_BYTES);
        self.b
            .ins()
            .load(types::F32X4, MemFlagsData::trusted(), p, at)
    }

    fn store_vec(&mut self, v: Value, p: Value, off: i32, k: usize) {
        let at = Offset32::new(off + k as i32 * QUAD_BYTES);
        self.b.ins().store(MemFlagsData::trusted(), v, p, at);
    }

    /// Stores `v` into the lanes of quad `k`'s vector at `p + off` set in
    /// the lane mask `m`, keeping the others: the blend of
    /// [`Self::select_f`], with the old lanes loaded and the result stored
    /// as integers (no casts).
    fn blend_vec(&mut self, m: Value, v: Value, p: Value, off: i32, k: usize) {
        let at = Offset32::new(off + k as i32 * QUAD_BYTES);
        let old = self
            .b
            .ins()
            .load(types::I32X4, MemFlagsData::trusted(), p, at);
        let v = self.as_int(v);
        let new = self.b.ins().bitselect(m, v, old);
        self.b.ins().store(MemFlagsData::trusted(), new, p, at);
    }

    /// Calls host callback at `io + slot` for node `node` with the batch's
    /// lanes; a non-zero status leaves the function.
    fn host_call(&mut self, slot: usize, node: u32, mask: Value) {
        let f = self
            .b
            .ins()
            .load(self.ptr, MemFlagsData::trusted(), self.io, slot as i32);
        let node = self.b.ins().iconst(types::I32, i64::from(node));
        let lane0 = self.lane0;
        let count = self.b.ins().iconst(types::I32, 4 * self.w as i64);
        let call =
            self.b
                .ins()
                .call_indirect(self.host_sig, f, &[self.io, node, lane0, count, mask]);
        let status = self.b.inst_results(call)[0];
        let cont = self.b.create_block();
        self.b
            .ins()
            .brif(status, self.err, &[status.into()], cont, &[]);
        self.err_used = true;
        self.b.switch_to_block(cont);
    }

    /// Stores a value into `io.args[chan]` for the batch.
    fn store_arg(&mut self, chan: usize, v: [Value; GROUP_QUADS]) {
        let p = self.io_base;
        let off = io_offsets::ARGS as i32 + chan as i32 * CHAN_BYTES;
        for (k, &x) in v.iter().enumerate().take(self.w) {
            self.store_vec(x, p, off, k);
        }
    }

    /// [`Self::each`] for a pure operation of the per-quad values `ins`: a
    /// quad whose inputs are the previous quad's (a strip's pixel row and
    /// v, constants and what is computed from them alone) takes the
    /// previous quad's result instead of computing it again.
    fn each_of(
        &mut self,
        ins: &[&[Value; GROUP_QUADS]],
        f: impl Fn(&mut Self, usize) -> Value,
    ) -> [Value; GROUP_QUADS] {
        self.per_quad(|k| ins.iter().all(|v| v[k] == v[k - 1]), f)
    }

    fn each(&mut self, f: impl Fn(&mut Self, usize) -> Value) -> [Value; GROUP_QUADS] {
        self.per_quad(|_| false, f)
    }

    /// `f` of each quad `k` of the batch, except that a quad `k > 0` for
    /// which `same(k)` holds takes quad `k − 1`'s result; entries past the
    /// batch repeat quad 0's.
    fn per_quad<T: Copy>(
        &mut self,
        same: impl Fn(usize) -> bool,
        f: impl Fn(&mut Self, usize) -> T,
    ) -> [T; GROUP_QUADS] {
        let first = f(self, 0);
        let mut out = [first; GROUP_QUADS];
        for k in 1..self.w {
            out[k] = if same(k) { out[k - 1] } else { f(self, k) };
        }
        out
    }
}
