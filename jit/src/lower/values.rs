//! Small CLIF value helpers of the lowering: casts without round trips,
//! immediates that skip a zero, values made once per path ([`Memo`]), and
//! shuffles of 32-bit lanes.

use super::Lowering;
use crate::state::io_offsets;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    Block, ConstantData, Endianness, Function, InstBuilder, InstructionData, MemFlagsData, Opcode,
    Type, Value, ValueDef, types,
};

/// A value the lowering makes once and uses again: it depends on nothing
/// compiled code changes. A memoised value is valid only where the block
/// that made it dominates, so the memo is kept per path: a branch keeps
/// the memo it starts from and gives each arm, and the join, that copy
/// ([`Lowering::arm`], [`Lowering::rejoin`]); a loop's body and what
/// follows it start from the memo before it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Memo {
    /// A vector constant: its 16 bytes, as a type.
    Const(u128, Type),
    /// The address of input `k`'s descriptor (`Io::tex`, unchanged for the
    /// whole call: [`super::fetch::described`]).
    Desc(u8),
    /// A word, of a type at an offset, of a descriptor (a `Desc` value) or
    /// of `Io` (the descriptor table's address).
    DescWord(Value, Type, i32),
    /// A scalar value broadcast to a vector type.
    Splat(Value, Type),
    /// Lanes 0, 1 (`false`) or 2, 3 (`true`) of an F32X4 value as F64X2:
    /// the dot products' factors, which several products may share.
    Widened(Value, bool),
    /// A sign modifier applied to a value.
    Sign(crate::ir::Unary, Value),
    /// A row offset, y · pitch, in elements, of a lookup or an uncached
    /// write: the quads of a batch that reach one row (a strip's row
    /// coordinate) share it.
    RowOffset(Value, Value),
}

/// The memoised values of a path.
pub(super) type Memos = super::hash::FastMap<Memo, Value>;

impl Lowering<'_, '_> {
    /// `v`'s bits as `ty`: `v` itself where it has that type, the value a
    /// bitcast `v` was made from where that one has it (no round trips).
    pub(super) fn bitcast(&mut self, ty: Type, v: Value) -> Value {
        let dfg = &self.b.func.dfg;
        if dfg.value_type(v) == ty {
            return v;
        }
        if let Some(inst) = dfg.value_def(v).inst()
            && dfg.insts[inst].opcode() == Opcode::Bitcast
            && let [arg] = *dfg.inst_args(inst)
            && dfg.value_type(arg) == ty
        {
            return arg;
        }
        let mut flags = MemFlagsData::new();
        flags.set_endianness(Endianness::Little);
        self.b.ins().bitcast(ty, flags, v)
    }

    /// The value of `v` where it is an integer constant.
    pub(super) fn known_int(&self, v: Value) -> Option<i64> {
        let dfg = &self.b.func.dfg;
        match dfg.insts[dfg.value_def(v).inst()?] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        }
    }

    /// `x + n` (`x` itself for 0).
    pub(super) fn add_imm(&mut self, x: Value, n: i64) -> Value {
        if n == 0 {
            x
        } else {
            self.b.ins().iadd_imm_s(x, n)
        }
    }

    /// An I32X4 with `x` in every lane (memoised).
    pub(super) fn splat_i(&mut self, x: u32) -> Value {
        self.splat_bits(types::I32X4, x)
    }

    /// A vector of type `ty` with the pattern `x` in every 32-bit lane
    /// (memoised per type).
    pub(super) fn splat_bits(&mut self, ty: Type, x: u32) -> Value {
        self.vconst(ty, [x; 4])
    }

    /// An I32X4 of four different lanes (memoised).
    pub(super) fn vconst4(&mut self, x: [u32; 4]) -> Value {
        self.vconst(types::I32X4, x)
    }

    /// A vector constant of type `ty`, its 32-bit lanes `x` (memoised).
    fn vconst(&mut self, ty: Type, x: [u32; 4]) -> Value {
        let key = x
            .iter()
            .rev()
            .fold(0u128, |k, &lane| (k << 32) | u128::from(lane));
        self.memoised(Memo::Const(key, ty), |l| {
            let bytes = key.to_le_bytes().to_vec();
            let c = l.b.func.dfg.constants.insert(ConstantData::from(bytes));
            l.b.ins().vconst(ty, c)
        })
    }

    /// 1.0 in every lane, loaded from `Io::one` (see [`super::math`]) once
    /// per function, in its entry block — which dominates every use, and
    /// where the lowering of an earlier clause of the same function (a loop
    /// region's driver lowers several) may have loaded it already.
    pub(super) fn one(&mut self) -> Value {
        if let Some(v) = self.one {
            return v;
        }
        let io = self.io;
        let func = &*self.b.func;
        let entry = func
            .layout
            .entry_block()
            .expect("a function being built has an entry");
        let io_in_entry = matches!(func.dfg.value_def(io), ValueDef::Param(b, _) if b == entry);
        let flags = MemFlagsData::trusted().with_readonly();
        let v = if !io_in_entry {
            // Not a parameter: made here, for this use alone.
            let x = self
                .b
                .ins()
                .load(types::F32, flags, io, io_offsets::ONE as i32);
            return self.b.ins().splat(types::F32X4, x);
        } else if let Some(v) = loaded_one(func, entry, io) {
            v
        } else if self.b.current_block() == Some(entry) {
            let x = self
                .b
                .ins()
                .load(types::F32, flags, io, io_offsets::ONE as i32);
            self.b.ins().splat(types::F32X4, x)
        } else {
            // The entry block is filled: before its terminator.
            let term = func.layout.last_inst(entry).expect("a filled block ends");
            let mut pos = FuncCursor::new(self.b.func).at_inst(term);
            let x = pos
                .ins()
                .load(types::F32, flags, io, io_offsets::ONE as i32);
            pos.ins().splat(types::F32X4, x)
        };
        self.one = Some(v);
        v
    }

    /// The value memoised as `key` on this path, made by `make` first.
    pub(super) fn memoised(&mut self, key: Memo, make: impl FnOnce(&mut Self) -> Value) -> Value {
        if let Some(&v) = self.memo.get(&key) {
            return v;
        }
        let v = make(self);
        self.memo.insert(key, v);
        v
    }

    /// `x` broadcast to vector type `ty` (memoised).
    pub(super) fn splat_of(&mut self, ty: Type, x: Value) -> Value {
        self.memoised(Memo::Splat(x, ty), |l| l.b.ins().splat(ty, x))
    }

    /// Starts `block`, an arm of a branch that started from memo `at`: the
    /// values memoised since do not dominate it.
    pub(super) fn arm(&mut self, block: Block, at: &Memos) {
        self.memo.clone_from(at);
        self.b.switch_to_block(block);
    }

    /// Starts `join`, where the arms of a branch that started from memo
    /// `at` meet: only what the branch started with dominates it.
    pub(super) fn rejoin(&mut self, join: Block, at: Memos) {
        self.memo = at;
        self.b.switch_to_block(join);
    }

    /// Lanes of `a` (0–3) and `b` (4–7) picked by 32-bit lane index.
    pub(super) fn shuffle32(&mut self, a: Value, b: Value, lanes: [u8; 4]) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let r = self.shuffle_bytes(a, b, lanes);
        self.bitcast(ty, r)
    }

    /// [`Self::shuffle32`] with the result left as I8X16.
    pub(super) fn shuffle_bytes(&mut self, a: Value, b: Value, lanes: [u8; 4]) -> Value {
        let a8 = self.bitcast(types::I8X16, a);
        let b8 = if b == a {
            a8
        } else {
            self.bitcast(types::I8X16, b)
        };
        let mask: Vec<u8> = lanes
            .iter()
            .flat_map(|&l| (0..4).map(move |k| l * 4 + k))
            .collect();
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(mask));
        self.b.ins().shuffle(a8, b8, imm)
    }

    /// The 4 × 4 transpose of 32-bit lanes: result `i` holds lane `i` of
    /// `v[0]`, `v[1]`, `v[2]`, `v[3]` in that order. The results are I8X16
    /// (callers store them or cast them once).
    pub(super) fn transpose4(&mut self, v: [Value; 4]) -> [Value; 4] {
        // Each input cast once, not once per shuffle that reads it.
        let mut v = v;
        for x in &mut v {
            *x = self.bitcast(types::I8X16, *x);
        }
        let lo01 = self.shuffle_bytes(v[0], v[1], [0, 4, 1, 5]);
        let lo23 = self.shuffle_bytes(v[2], v[3], [0, 4, 1, 5]);
        let hi01 = self.shuffle_bytes(v[0], v[1], [2, 6, 3, 7]);
        let hi23 = self.shuffle_bytes(v[2], v[3], [2, 6, 3, 7]);
        [
            self.shuffle_bytes(lo01, lo23, [0, 1, 4, 5]),
            self.shuffle_bytes(lo01, lo23, [2, 3, 6, 7]),
            self.shuffle_bytes(hi01, hi23, [0, 1, 4, 5]),
            self.shuffle_bytes(hi01, hi23, [2, 3, 6, 7]),
        ]
    }
}

/// The splat of `Io::one` loaded from `io` in block `entry`, if there is one.
fn loaded_one(func: &Function, entry: Block, io: Value) -> Option<Value> {
    func.layout.block_insts(entry).find_map(|inst| {
        let dfg = &func.dfg;
        if dfg.insts[inst].opcode() != Opcode::Splat {
            return None;
        }
        let [x] = *dfg.inst_args(inst) else {
            return None;
        };
        let load = dfg.value_def(x).inst()?;
        match dfg.insts[load] {
            InstructionData::Load {
                opcode: Opcode::Load,
                arg,
                offset,
                ..
            } if arg == io && i32::from(offset) == io_offsets::ONE as i32 => {
                Some(dfg.first_result(inst))
            }
            _ => None,
        }
    })
}
