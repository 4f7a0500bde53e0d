//! CLIF listings of compiled clauses, annotated with the DPP instructions
//! they were lowered from, and of lane-wise loop regions (`ctm clif`).

use super::build::{build_function, shape_of};
use super::loops::lanewise_function;
use super::{JitError, JitOptions};
use crate::ir::Program;
use crate::lanewise::lanewise;
use crate::lower::Body;
use crate::regions::loop_regions;
use cranelift_codegen::ir::Function;
use cranelift_codegen::write::{FuncWriter, PlainWriter};
use cranelift_frontend::FunctionBuilderContext;
use std::fmt::Write as _;

/// Prints the CLIF of every clause, each DPP instruction's text (from
/// `describe(pc)`) as a comment above the code lowered from it, then the
/// lane-wise function of each loop region that has one.
pub fn clif(
    program: &Program,
    opts: JitOptions,
    describe: &dyn Fn(u16) -> String,
) -> Result<String, JitError> {
    program.verify()?;
    let opts = opts.resolved(program);
    let isa = super::CodeCache::global().isa(opts)?;
    let mut module = super::build::new_module(isa);
    let mut fctx = FunctionBuilderContext::new();
    let mut out = String::new();
    let regions = loop_regions(program);
    for (ci, clause) in program.clauses.iter().enumerate() {
        let (_, lookups) = shape_of(program, &regions, ci);
        let shape = (Body::Both, lookups);
        let mut func = Function::new();
        let built = build_function(&module, program, (ci, shape), opts, (&mut fctx, &mut func))
            .map(|marks| (func, marks));
        let _ = writeln!(
            out,
            "; clause {ci}: instructions {}..{} ({} values), then {:?}",
            clause.start,
            clause.start + clause.len,
            clause.values,
            clause.term
        );
        let (func, marks) = match built {
            Ok(built) => built,
            Err(why) => {
                let _ = writeln!(out, "; not compiled: {why}\n");
                continue;
            }
        };
        let mut w = Annotated {
            marks: marks.into_iter().collect(),
            describe,
        };
        cranelift_codegen::write::decorate_function(&mut w, &mut out, &func)
            .map_err(|e| JitError::Module(e.to_string()))?;
        out.push('\n');
    }
    for (k, region) in regions.iter().enumerate() {
        let Some(lw) = lanewise(program, region) else {
            continue;
        };
        let parts = (program, region, &lw);
        match lanewise_function(&mut module, &mut fctx, k as u32, parts, opts) {
            Ok(func) => {
                let _ = writeln!(
                    out,
                    "; loop region at @{}, clauses {:?}, lane-wise ({} CLIF instructions)",
                    region.start,
                    region.clauses,
                    func.dfg.num_insts()
                );
                let _ = writeln!(out, "{func}");
            }
            Err(why) => {
                let _ = writeln!(
                    out,
                    "; loop region at @{}, clauses {:?}, lane-wise: not compiled: {why}\n",
                    region.start, region.clauses
                );
            }
        }
    }
    Ok(out)
}

struct Annotated<'a> {
    marks: std::collections::HashMap<cranelift_codegen::ir::Inst, u16>,
    describe: &'a dyn Fn(u16) -> String,
}

impl FuncWriter for Annotated<'_> {
    fn write_block_header(
        &mut self,
        w: &mut dyn std::fmt::Write,
        func: &Function,
        block: cranelift_codegen::ir::Block,
        indent: usize,
    ) -> std::fmt::Result {
        PlainWriter.write_block_header(w, func, block, indent)
    }

    fn write_instruction(
        &mut self,
        w: &mut dyn std::fmt::Write,
        func: &Function,
        aliases: &cranelift_codegen::entity::SecondaryMap<
            cranelift_codegen::ir::Value,
            Vec<cranelift_codegen::ir::Value>,
        >,
        inst: cranelift_codegen::ir::Inst,
        indent: usize,
    ) -> std::fmt::Result {
        if let Some(&pc) = self.marks.get(&inst) {
            for line in (self.describe)(pc).lines() {
                writeln!(w, "{:indent$}; @{pc} {line}", "")?;
            }
        }
        PlainWriter.write_instruction(w, func, aliases, inst, indent)
    }
}
