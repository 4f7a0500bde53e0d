//! Peaks of one core, measured with Cranelift-compiled code: the ceilings
//! compiled clauses are compared against in benchmarks.
//!
//! Ten independent chains of fused multiply-adds on F32X4 (enough to hide
//! the latency) run in a counted loop unrolled eight times; 8 × 10 × 4
//! lanes × 2 flops per iteration: the **FMA peak**.
//!
//! The **exact MAD ceiling** — a multiply, then a separately rounded add,
//! which is what a DPP MAD must be (docs/isa.md §7.1: not fused; denormals
//! flushed by the processor's DAZ mode at no cost, NaNs standardised only
//! where a value is observed) — is the same rate: every multiply occupies
//! one of the pipes an FMA would, so MADs cannot retire faster than FMAs,
//! and each does the same two flops. (Measuring it with chains of
//! multiplies and adds instead gave 30–42 GFLOP/s on this project's
//! machine depending on the chain count and the optimisation level —
//! below what compiled MAD kernels reach, so not a ceiling.)

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, InstBuilder, UserFuncName, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use ctm_jit::compile::JitError;
use std::time::Instant;

const CHAINS: usize = 10;
const UNROLL: u64 = 8;

/// Measures single-core F32X4 FMA throughput over `iterations` loop trips
/// and returns GFLOP/s.
pub fn fma_peak_gflops(iterations: u64) -> Result<f64, JitError> {
    peak_gflops(iterations)
}

/// The exact MAD ceiling of one core in GFLOP/s: the FMA peak, measured
/// over `iterations` loop trips (see the module docs). A MAD
/// pixel-instruction on four channels is 8 flops, so this over 8 is the
/// most MAD pixel-instructions per second one core can retire exactly.
pub fn mad_peak_gflops(iterations: u64) -> Result<f64, JitError> {
    peak_gflops(iterations)
}

fn peak_gflops(iterations: u64) -> Result<f64, JitError> {
    ctm_jit::host::check_features()?;
    let mut flags = settings::builder();
    flags
        .set("opt_level", "speed")
        .map_err(|e| JitError::Setup(e.to_string()))?;
    let isa = cranelift_native::builder()
        .map_err(|e| JitError::Setup(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Setup(e.to_string()))?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut ctx = module.make_context();
    ctx.func.signature.params.push(AbiParam::new(types::I64));
    ctx.func.signature.returns.push(AbiParam::new(types::F32));
    ctx.func.name = UserFuncName::user(0, 0);
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let n = b.block_params(entry)[0];
        let one = b.ins().f32const(1.0);
        let a = b.ins().f32const(0.999_999);
        let c = b.ins().f32const(1e-7);
        let a = b.ins().splat(types::F32X4, a);
        let c = b.ins().splat(types::F32X4, c);
        let init = b.ins().splat(types::F32X4, one);
        let head = b.create_block();
        b.append_block_param(head, types::I64);
        for _ in 0..CHAINS {
            b.append_block_param(head, types::F32X4);
        }
        let mut args: Vec<cranelift_codegen::ir::BlockArg> = vec![n.into()];
        args.extend(std::iter::repeat_n(
            cranelift_codegen::ir::BlockArg::from(init),
            CHAINS,
        ));
        b.ins().jump(head, &args);
        b.switch_to_block(head);
        let params = b.block_params(head).to_vec();
        let mut next: Vec<cranelift_codegen::ir::BlockArg> = vec![];
        let k = b.ins().iadd_imm_s(params[0], -1);
        next.push(k.into());
        // Unrolled: the back edge's block-argument moves are paid once per
        // UNROLL rounds of FMAs, not once per round.
        let mut accs = params[1..].to_vec();
        for _ in 0..UNROLL {
            for acc in &mut accs {
                *acc = b.ins().fma(*acc, a, c);
            }
        }
        next.extend(accs.into_iter().map(cranelift_codegen::ir::BlockArg::from));
        let done = b.create_block();
        let more = b.ins().icmp_imm_s(IntCC::SignedGreaterThan, k, 0);
        b.ins().brif(more, head, &next, done, &[]);
        b.switch_to_block(done);
        let mut sum = params[1];
        for &acc in &params[2..] {
            sum = b.ins().fadd(sum, acc);
        }
        let lane = b.ins().extractlane(sum, 0);
        b.ins().return_(&[lane]);
        b.seal_all_blocks();
        b.finalize(module.target_config());
    }
    let id = module
        .declare_function("fma_peak", Linkage::Local, &ctx.func.signature)
        .map_err(|e| JitError::Module(e.to_string()))?;
    module
        .define_function(id, &mut ctx)
        .map_err(|e| JitError::Module(format!("{e:?}")))?;
    module
        .finalize_definitions()
        .map_err(|e| JitError::Module(e.to_string()))?;
    let p = module.get_finalized_function(id);
    // SAFETY: the function was built above with the signature (i64) -> f32.
    let f = unsafe { std::mem::transmute::<*const u8, extern "C" fn(i64) -> f32>(p) };
    let iterations = iterations.div_ceil(UNROLL).max(1);
    let start = Instant::now();
    let sink = f(iterations as i64);
    let secs = start.elapsed().as_secs_f64();
    std::hint::black_box(sink);
    // SAFETY: `f` is not used after this point.
    unsafe { module.free_memory() };
    Ok((iterations * UNROLL * CHAINS as u64 * 8) as f64 / secs.max(1e-9) / 1e9)
}
