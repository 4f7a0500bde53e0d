//! A clause's function ([`lower_clause`]) or its body inlined in a loop
//! region's driver ([`inline_clause`]): the loop over the group's present
//! quads in batches, each batch skipped where none of its lanes can write,
//! else run by its full-batch body (every lane running and active, where
//! the clause has one) or its general body (lane masks).

use super::{Body, Lookups, Lowering, PcMarks, batch_quads, walk, writes_inactive};
use crate::ir::{Clause, Op};
use crate::state::{GROUP_QUADS, offsets};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::FunctionBuilder;

/// Builds the body of `clause` into `b`, whose function has the
/// [`crate::state::ClauseFn`] signature. `w` is the batch width in quads
/// asked for ([`batch_quads`] gives the one used).
pub(crate) fn lower_clause(
    b: &mut FunctionBuilder<'_>,
    clause: &Clause,
    w: usize,
    (bodies, lookups, program): (Body, Lookups, &crate::ir::Program),
    ptr: Type,
    call_conv: cranelift_codegen::isa::CallConv,
) -> PcMarks {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let args = [params[0], params[1], params[2]];
    let mut l = Lowering::for_clause(
        b,
        clause,
        w,
        (lookups, program),
        (ptr, call_conv),
        args,
        None,
    );
    let exit = l.b.create_block();
    l.clause_body(clause, bodies, exit);
    l.finish(exit);
    l.marks
}

/// Builds the general body of `clause` into the current block of `b` (a
/// loop region's driver) for the group at `lanes` with `uni` and `io`: on
/// to `ok` when done, to `err` (one I32 parameter) with the status of a
/// runtime call that failed. `w` as for [`lower_clause`]. False where the
/// body makes no runtime call (nothing goes to `err`).
pub(crate) fn inline_clause(
    b: &mut FunctionBuilder<'_>,
    clause: &Clause,
    w: usize,
    (lookups, program): (Lookups, &crate::ir::Program),
    args: [Value; 3],
    (ok, err): (Block, Block),
) -> bool {
    let ptr = b.func.dfg.value_type(args[0]);
    let call_conv = b.func.signature.call_conv;
    let parts = (lookups, program);
    let mut l = Lowering::for_clause(b, clause, w, parts, (ptr, call_conv), args, Some(err));
    l.clause_body(clause, Body::General, ok);
    l.err_used
}

/// Whether `clause`'s operations neither write nor call anything (an
/// ENDLOOP's clause has none): its body is empty.
fn inert(clause: &Clause) -> bool {
    clause.nodes.iter().all(|n| {
        matches!(
            n.op,
            Op::Const { .. } | Op::Imm { .. } | Op::SemWait | Op::SemAcquire { .. }
        )
    })
}

impl<'a, 'f> Lowering<'a, 'f> {
    /// A lowering of `clause` into the current block of `b`, for the group
    /// at `lanes` (with `uni`, `io`): its batch width from `w`, its
    /// lookups, the program's input forms, the clause's uniforms; a failed
    /// runtime call goes to `err` (one I32 parameter: the status), or to a
    /// block of its own ([`Lowering::finish`] returns the status).
    fn for_clause(
        b: &'a mut FunctionBuilder<'f>,
        clause: &Clause,
        w: usize,
        (lookups, program): (Lookups, &crate::ir::Program),
        (ptr, call_conv): (Type, cranelift_codegen::isa::CallConv),
        [lanes, uni, io]: [Value; 3],
        err: Option<Block>,
    ) -> Self {
        let w = batch_quads(clause, w, lookups);
        debug_assert!(w.is_power_of_two() && w <= GROUP_QUADS);
        // aL serves relative addresses alone (the batch loop sets the
        // first lane): a clause without them does not load it.
        let relative = clause.nodes.iter().any(|n| match &n.op {
            Op::Temp { index, .. } | Op::SetTemp { index, .. } | Op::Const { index, .. } => {
                index.rel
            }
            _ => false,
        });
        let al = if relative {
            b.ins().load(
                types::I32,
                MemFlagsData::trusted(),
                lanes,
                offsets::AL as i32,
            )
        } else {
            b.ins().iconst(types::I32, 0)
        };
        let parts = (clause.values, al);
        let mut l = Lowering::new(b, w, ptr, call_conv, [lanes, uni, io], parts, err);
        l.lookups = lookups;
        l.forms = program.forms;
        l.uncached_unorm = program.uncached_unorm;
        l.uniforms(clause);
        #[cfg(feature = "fault-injection")]
        crate::fault::check(clause, crate::fault::Site::Clause);
        l
    }

    /// The loop over the group's batches running `bodies` of `clause`,
    /// from the current block, leaving by `exit` (a block without
    /// parameters).
    fn clause_body(&mut self, clause: &Clause, bodies: Body, exit: Block) {
        if inert(clause) {
            // Nothing a batch would do: no loop over them.
            self.b.ins().jump(exit, &[]);
            return;
        }
        let fast = walk::eligible(clause) && bodies != Body::General;
        debug_assert!(fast || bodies != Body::Full, "no full-batch body to build");
        let w = self.w;
        let quads = self.b.ins().load(
            types::I32,
            MemFlagsData::trusted(),
            self.lanes,
            offsets::QUADS as i32,
        );
        let l = self;
        // head(q0): q0 < quads ? body : exit
        let (head, next, _) = l.batch_loop_to(quads, l.ptr, exit);
        // Skip the batch when none of its lanes can write.
        let writes_inactive = writes_inactive(clause);
        let batch = (1i64 << (4 * w)) - 1;
        let running = l.load_bits(offsets::RUNNING);
        let active = l.load_bits(offsets::ACTIVE);
        // The batch's running-and-active bits (also the full-batch test).
        let both_word = l.b.ins().band(running, active);
        let both = l.b.ins().ushr(both_word, l.lane0);
        let both = l.b.ins().band_imm_s(both, batch);
        let live = if writes_inactive {
            let r = l.b.ins().ushr(running, l.lane0);
            l.b.ins().band_imm_s(r, batch)
        } else {
            both
        };
        let work = l.b.create_block();
        l.b.ins().brif(live, work, &[], head, &[next.into()]);

        l.b.switch_to_block(work);
        l.batch_bits = Some([running, active, both_word]);
        if bodies == Body::Full {
            l.full_batch(clause);
            l.b.ins().jump(head, &[next.into()]);
        } else {
            // Values defined so far (the uniforms) serve both bodies; anything
            // memoised inside one body must not leak into the other.
            let (vals, lazy, memo) = (l.vals.clone(), l.lazy.clone(), l.memo.clone());
            if fast {
                let full = l.b.ins().icmp_imm_s(IntCC::Equal, both, batch);
                let (fast_body, general) = (l.b.create_block(), l.b.create_block());
                l.b.ins().brif(full, fast_body, &[], general, &[]);
                l.b.switch_to_block(fast_body);
                l.full_batch(clause);
                l.b.ins().jump(head, &[next.into()]);
                l.b.switch_to_block(general);
                (l.vals, l.lazy, l.memo) = (vals, lazy, memo);
            }
            l.masked_batch(clause);
            l.b.ins().jump(head, &[next.into()]);
        }
        l.batch_bits = None;
    }
}
