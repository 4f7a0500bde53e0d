//! Uncached (UMRT) writes in compiled code (`docs/isa.md` §5.4): where the
//! runtime handed the clause a log ([`crate::state::UmrtLog`]), the clause
//! computes each writing lane's element and appends the write itself;
//! otherwise it calls the runtime for the batch, as before.
//!
//! The element is the runtime's (`RunView::uncached_write` of the `ctm`
//! crate): `texel_floor` of the unscaled X and Y — compiled code runs under
//! MXCSR.DAZ, which reads a denormal as the zero `texel_floor` flushes it to
//! — inside pitch × height (NaN and infinities are outside), the shared
//! index modes taking the quad's first writing lane's X and Y. Lanes are
//! appended in lane order, the order in which the runtime makes the writes
//! of one operation. A clause with two writes takes whole groups, so one
//! operation's writes of a group are not interleaved with another's; one
//! with a single write may take narrow batches (`shape::direct_inputs`).
//! A strip (`Lowering::whole`) of a program with one write appends every
//! lane's: its quads are whole and its caller always hands over a log.

use super::values::Memo;
use super::{GROUP_QUADS, Lowering};
use crate::ir::UmrtIndex;
use crate::state::{UncachedWrite, io_offsets, offsets, umrt_offsets};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

const _: () = assert!(umrt_offsets::ADDR == 0 && umrt_offsets::BYTES == 4);

/// The operands of one uncached write, one vector per quad of the batch.
pub(super) struct Umrt {
    /// Node index in the clause (for the runtime call).
    pub node: u32,
    pub index: UmrtIndex,
    /// Value, X, Y.
    pub ops: [[Value; GROUP_QUADS]; 3],
}

impl Lowering<'_, '_> {
    /// The uncached write `op` of the lanes `enable` lets write (every lane
    /// when `None`), helper lanes excepted.
    pub(super) fn uncached_write(&mut self, op: Umrt, enable: Option<&[Value]>) {
        let bits = self.enable_bits(enable);
        let log = io_offsets::UMRT_LOG as i32;
        if self.whole {
            // A strip: whole quads (no helper lanes) and no lane state for
            // the runtime; its caller always hands over a log.
            let at = self
                .b
                .ins()
                .load(self.ptr, MemFlagsData::trusted(), self.io, log);
            self.log_writes(&op, bits, at);
            return;
        }
        let helper = self.load_bits(offsets::HELPER);
        let helper = self.b.ins().ushr(helper, self.lane0);
        let bits = self.b.ins().band_not(bits, helper);

        let at = self
            .b
            .ins()
            .load(self.ptr, MemFlagsData::trusted(), self.io, log);
        // Code that knows output 0's format appends only where the run's
        // log agrees (`Program::uncached_unorm`).
        let append = match self.uncached_unorm {
            None => at,
            Some(unorm) => {
                let off = log + umrt_offsets::UNORM as i32;
                let scale = self
                    .b
                    .ins()
                    .load(types::I32, MemFlagsData::trusted(), self.io, off);
                let cc = [IntCC::Equal, IntCC::NotEqual][usize::from(unorm)];
                let agrees = self.b.ins().icmp_imm_s(cc, scale, 0);
                let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, at, 0);
                self.b.ins().band(has, agrees)
            }
        };
        let [direct, host, done] = std::array::from_fn(|_| self.b.create_block());
        self.b.ins().brif(append, direct, &[], host, &[]);

        let memo = self.memo.clone();
        self.arm(host, &memo);
        // The runtime reads the operands from the arguments.
        for (c, q) in op.ops.into_iter().enumerate() {
            self.store_arg(c, q);
        }
        self.host_call(io_offsets::UMRT, op.node, bits);
        self.b.ins().jump(done, &[]);

        self.arm(direct, &memo);
        self.log_writes(&op, bits, at);
        self.b.ins().jump(done, &[]);

        self.rejoin(done, memo);
    }

    /// Appends the batch's writes to the log whose next entry is `at`
    /// (see the module docs): per quad, the element indices and the four
    /// entries in SIMD, stored in pairs where every lane of the quad is
    /// known to write (a strip's), else one by one.
    fn log_writes(&mut self, op: &Umrt, bits: Value, at: Value) {
        let flags = MemFlagsData::trusted();
        let log = io_offsets::UMRT_LOG as i32;
        // Which lanes write, where the lowering knows (a strip's whole
        // quads): then every lane's place in the log is known too.
        let known = self.known_int(bits);
        let word = |l: &mut Self, ty, off: usize| l.b.ins().load(ty, flags, l.io, log + off as i32);
        // The surface ends below 2^32 (`UmrtLog`): an address is its low
        // word, the high word zero.
        let base = word(self, types::I32, umrt_offsets::BASE);
        let pitch = word(self, types::I32, umrt_offsets::PITCH);
        let shift = word(self, types::I32, umrt_offsets::SHIFT);
        let size_x = word(self, types::F32, umrt_offsets::SIZE);
        let size_y = word(self, types::F32, umrt_offsets::SIZE + 4);
        let size_x = self.b.ins().splat(types::F32X4, size_x);
        let size_y = self.b.ins().splat(types::F32X4, size_y);
        let pitch = self.b.ins().splat(types::I32X4, pitch);
        let (outside, zero) = (self.splat_i(u32::MAX), self.splat_i(0));
        // Element index per lane, or -1 outside the surface.
        let mut index = Vec::with_capacity(self.w);
        let tx = self.texels(&op.ops[1], size_x, true);
        let ty = self.texels(&op.ops[2], size_y, true);
        for k in 0..self.w {
            let ((x, in_x), (y, in_y)) = (tx[k], ty[k]);
            let inside = self.b.ins().band(in_x, in_y);
            let e = self.memoised(Memo::RowOffset(y, pitch), |l| l.b.ins().imul(y, pitch));
            let e = self.b.ins().iadd(e, x);
            index.push(self.b.ins().bitselect(inside, e, outside));
        }
        // The shared modes: each lane takes its quad's first writing lane's
        // index, read back from args[1] (X is not read again).
        let index_at = io_offsets::ARGS as i32 + super::CHAN_BYTES;
        if op.index == UmrtIndex::Shared {
            for (k, &e) in index.iter().enumerate() {
                self.store_vec(e, self.io_base, index_at, k);
            }
            for (k, e) in index.iter_mut().enumerate() {
                let v = match known {
                    // Every lane's bits known (a strip's): the lead lane is too.
                    Some(b) => {
                        let lead = lead_lane_of(b, k) as i32;
                        self.b
                            .ins()
                            .load(types::I32, flags, self.io_base, index_at + lead)
                    }
                    None => {
                        let lead = self.lead_lane(bits, k);
                        let p = self.b.ins().iadd(self.io_base, lead);
                        self.b.ins().load(types::I32, flags, p, index_at)
                    }
                };
                *e = self.b.ins().splat(types::I32X4, v);
            }
        }
        let chan_off = word(self, types::I32, umrt_offsets::CHAN_OFF);
        let base = self.b.ins().iadd(base, chan_off);
        let base = self.b.ins().splat(types::I32X4, base);
        let values = self.log_values(&op.ops[0]);
        let unaligned = MemFlagsData::new().with_notrap();
        let mut at = at;
        // Bytes appended past `at`, where the writing lanes are known.
        let mut appended = 0i32;
        for (k, &e) in index.iter().enumerate() {
            let addr = self.b.ins().ishl(e, shift);
            let addr = self.b.ins().iadd(addr, base);
            let inside = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, e, zero);
            let no_write = self.splat_i(UncachedWrite::OUTSIDE);
            let addr = self.b.ins().bitselect(inside, addr, no_write);
            // Lanes 0 and 1's entries (address, value), then lanes 2 and 3's.
            let pairs =
                [[0, 4, 1, 5], [2, 6, 3, 7]].map(|l| self.shuffle_bytes(addr, values[k], l));
            let quad = (known.map(|b| (b >> (4 * k)) & 0xF)).unwrap_or(0);
            if quad == 0xF {
                // Every lane writes: both pairs as they are.
                for pair in pairs {
                    self.b.ins().store(unaligned, pair, at, appended);
                    appended += 2 * ENTRY_BYTES;
                }
                continue;
            }
            let pairs = pairs.map(|p| self.bitcast(types::I64X2, p));
            for l in 0..4 {
                let lane = 4 * k + l;
                let entry = self.b.ins().extractlane(pairs[l / 2], (l % 2) as u8);
                if let Some(b) = known {
                    if (b >> lane) & 1 == 1 {
                        self.b.ins().store(unaligned, entry, at, appended);
                        appended += ENTRY_BYTES;
                    }
                    continue;
                }
                self.b.ins().store(unaligned, entry, at, 0);
                let on = self.b.ins().ushr_imm_s(bits, lane as i64);
                let on = self.b.ins().band_imm_s(on, 1);
                let step = self
                    .b
                    .ins()
                    .ishl_imm_s(on, ENTRY_BYTES.trailing_zeros() as i64);
                let step = self.b.ins().uextend(self.ptr, step);
                at = self.b.ins().iadd(at, step);
            }
        }
        let at = self.add_imm(at, i64::from(appended));
        self.b.ins().store(flags, at, self.io, log);
    }

    /// The bytes each lane stores, per quad (I32X4): the values' bits for
    /// a float surface, their quantisation for a unorm one (see
    /// [`crate::state::UmrtLog`]) — in f64, as the memory controller
    /// computes it: the clamped value times 255 or 65535 is exact there,
    /// and so is adding one half before the floor (round halves away from
    /// zero). Denormal values read as zero under DAZ and quantise to 0, as
    /// they do there.
    /// Where output 0's format is known (a program that says it: a
    /// clause's [`Self::uncached_write`] appends only where the log
    /// agrees, and a strip is only called with a log that does, as
    /// [`crate::state::UmrtLog::agrees`] says), only its way.
    fn log_values(&mut self, values: &[Value; GROUP_QUADS]) -> Vec<Value> {
        let known = self.uncached_unorm;
        if known == Some(false) {
            return (0..self.w)
                .map(|k| self.bitcast(types::I32X4, values[k]))
                .collect();
        }
        let flags = MemFlagsData::trusted();
        let at = io_offsets::UMRT_LOG as i32 + umrt_offsets::UNORM as i32;
        let unorm = self.b.ins().load(types::I32, flags, self.io, at);
        if known == Some(true) {
            return self.quantise(values, unorm);
        }
        let (convert, merge) = (self.b.create_block(), self.b.create_block());
        let bits: Vec<Value> = (0..self.w)
            .map(|k| {
                self.b.append_block_param(merge, types::I32X4);
                self.bitcast(types::I32X4, values[k])
            })
            .collect();
        let args: Vec<_> = bits.iter().map(|&v| v.into()).collect();
        self.b.ins().brif(unorm, convert, &[], merge, &args);

        let memo = self.memo.clone();
        self.arm(convert, &memo);
        let quantised = self.quantise(values, unorm);
        let args: Vec<_> = quantised.iter().map(|&v| v.into()).collect();
        self.b.ins().jump(merge, &args);
        self.rejoin(merge, memo);
        self.b.block_params(merge).to_vec()
    }

    /// The quantisation of [`Self::log_values`]; `unorm` holds the f32
    /// bits of the integer that 1.0 stores as.
    fn quantise(&mut self, values: &[Value; GROUP_QUADS], unorm: Value) -> Vec<Value> {
        let scale = self.bitcast(types::F32, unorm);
        let scale = self.b.ins().fpromote(types::F64, scale);
        let scale = self.b.ins().splat(types::F64X2, scale);
        let half = self.b.ins().f64const(0.5);
        let half = self.b.ins().splat(types::F64X2, half);
        let (zero, one) = (self.b.ins().f32const(0.0), self.b.ins().f32const(1.0));
        let (zero, one) = (
            self.b.ins().splat(types::F32X4, zero),
            self.b.ins().splat(types::F32X4, one),
        );
        let mut quantised = Vec::with_capacity(self.w);
        for &v in values.iter().take(self.w) {
            let nan = self.b.ins().fcmp(FloatCC::Unordered, v, v);
            let c = self.b.ins().fmin(v, one);
            let c = self.b.ins().fmax(c, zero);
            let high = self.shuffle32(c, c, [2, 3, 2, 3]);
            let halves = [c, high].map(|h| {
                let d = self.b.ins().fvpromote_low(h);
                let d = self.b.ins().fmul(d, scale);
                let d = self.b.ins().fadd(d, half);
                let d = self.b.ins().floor(d);
                // An integer up to 65535: exact in f32.
                self.b.ins().fvdemote(d)
            });
            let q = self.shuffle32(halves[0], halves[1], [0, 1, 4, 5]);
            let q = self.b.ins().x86_cvtt2dq(types::I32X4, q);
            quantised.push(self.b.ins().band_not(q, nan));
        }
        quantised
    }

    /// The byte offset, from lane 0 of the batch, of quad `q`'s first lane
    /// in `bits` (the lane after the quad when it has none: no lane of the
    /// quad writes then); [`lead_lane_of`] where the bits are known.
    fn lead_lane(&mut self, bits: Value, q: usize) -> Value {
        let nib = self.b.ins().ushr_imm_s(bits, 4 * q as i64);
        let nib = self.b.ins().band_imm_s(nib, 0xF);
        let nib = self.b.ins().bor_imm_s(nib, 0x10);
        let first = self.b.ins().ctz(nib);
        let lane = self.b.ins().iadd_imm_s(first, 4 * q as i64);
        let off = self.b.ins().ishl_imm_s(lane, 2);
        self.b.ins().uextend(self.ptr, off)
    }
}

/// Bytes of one log entry: (address, value), two 32-bit words.
const ENTRY_BYTES: i32 = umrt_offsets::ENTRY as i32;

/// [`Lowering::lead_lane`] of known bits `bits`.
fn lead_lane_of(bits: i64, q: usize) -> u32 {
    let first = (((bits >> (4 * q)) & 0xF) | 0x10).trailing_zeros();
    (first + 4 * q as u32) * 4
}
