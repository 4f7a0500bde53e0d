//! Binding by name: a job's inputs, outputs and constants given by the
//! names a program's source uses — a shader's `v0`, `s0`, `oC0`, `c3`,
//! `i0`, `b1`, its constant table's names — or the machine's own (`in2`,
//! `out0`, `c5`), so a library user never translates registers by hand.

use super::{HostSurface, Job, Kernel, KernelError, Resource};
use crate::mc::Format;
use std::path::Path;

/// A value for a named resource ([`Kernel::bind`]); made from what it
/// binds with `From`: a [`HostSurface`] (an input or a sampler), a
/// [`Format`] (an output), `[f32; 4]` (a float constant), `(count, init,
/// step)` (a loop constant) or `bool`.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    /// An input surface (or a shader's sampler).
    Surface(HostSurface),
    /// An output in this format.
    Output(Format),
    /// A float constant.
    Float([f32; 4]),
    /// A loop constant: count, initial aL, step.
    Int(u8, u8, i8),
    /// A boolean constant.
    Bool(bool),
}

impl From<HostSurface> for Binding {
    fn from(s: HostSurface) -> Binding {
        Binding::Surface(s)
    }
}
impl From<Format> for Binding {
    fn from(f: Format) -> Binding {
        Binding::Output(f)
    }
}
impl From<[f32; 4]> for Binding {
    fn from(v: [f32; 4]) -> Binding {
        Binding::Float(v)
    }
}
impl From<(u8, u8, i8)> for Binding {
    fn from((count, init, step): (u8, u8, i8)) -> Binding {
        Binding::Int(count, init, step)
    }
}
impl From<bool> for Binding {
    fn from(b: bool) -> Binding {
        Binding::Bool(b)
    }
}

impl Kernel {
    /// A kernel from a program file's bytes, whatever its form: an ELF
    /// executable, DPP assembly, or a Direct3D 9 pixel shader as text or
    /// bytecode (compiled in the Direct3D dialect).
    ///
    /// ```
    /// use ctm::kernel::{HostSurface, Job, Kernel};
    /// use ctm::mc::Format;
    /// let k = Kernel::from_bytes(b"ps_3_0\ndcl_texcoord0 v0\nadd oC0, v0, c3\n").unwrap();
    /// let x = HostSurface::from_f32(Format::Float32_4, 1, 1, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    /// let job = Job::new(1, 1);
    /// let job = k.bind(job, "v0", x).unwrap();
    /// let job = k.bind(job, "c3", [10.0, 20.0, 30.0, 40.0]).unwrap();
    /// let job = k.bind(job, "oC0", Format::Float32_4).unwrap();
    /// let out = k.run(&job).unwrap();
    /// let oc0 = k.output("oC0").unwrap();
    /// assert_eq!(out.output(oc0).unwrap().to_f32(), [11.0, 22.0, 33.0, 44.0]);
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Kernel, KernelError> {
        let loaded = crate::program::load_bytes(bytes, Path::new("<program>"), false)?;
        Ok(Kernel::new(loaded.exe))
    }

    /// Binds `value` to the resource `name` stands for in this program
    /// ([`Kernel::resource`]); an unknown name, or a value of the wrong
    /// kind for it, is an error that lists the program's names.
    pub fn bind(
        &self,
        job: Job,
        name: &str,
        value: impl Into<Binding>,
    ) -> Result<Job, KernelError> {
        let value = value.into();
        let names = || {
            let mut n: Vec<&str> = self
                .exe
                .info
                .bindings
                .iter()
                .map(|(k, _)| k.as_str())
                .filter(|k| !k.contains('.'))
                .collect();
            n.extend(["inN", "outN", "cN", "iN", "bN"]);
            n.join(", ")
        };
        let Some(resource) = self.resource(name) else {
            return Err(KernelError::Job(format!(
                "`{name}` names nothing in this program; its names: {}",
                names()
            )));
        };
        Ok(match (resource, value) {
            (Resource::Input(n), Binding::Surface(s)) => job.input(n, s),
            (Resource::Output(n), Binding::Output(f)) => job.output(n, f),
            (Resource::Float(n), Binding::Float(v)) => job.constant(n, v),
            (Resource::Int(n), Binding::Int(c, i, s)) => job.int(n, c, i, s),
            (Resource::Bool(n), Binding::Bool(b)) => job.boolean(n, b),
            (resource, value) => {
                let wants = match resource {
                    Resource::Input(_) => "a surface (HostSurface)",
                    Resource::Output(_) => "an output format (Format)",
                    Resource::Cond => "the conditional setup (Job::cond)",
                    Resource::Float(_) => "four floats",
                    Resource::Int(_) => "a loop constant (count, init, step)",
                    Resource::Bool(_) => "a bool",
                };
                return Err(KernelError::Job(format!(
                    "`{name}` is {resource:?}, which takes {wants}, not {}",
                    match value {
                        Binding::Surface(_) => "a surface",
                        Binding::Output(_) => "an output format",
                        Binding::Float(_) => "four floats",
                        Binding::Int(..) => "a loop constant",
                        Binding::Bool(_) => "a bool",
                    }
                )));
            }
        })
    }

    /// The output number a name stands for (`oC0`, `out1`), to read a
    /// result back with [`super::JobResult::output`].
    pub fn output(&self, name: &str) -> Option<u8> {
        match self.resource(name)? {
            Resource::Output(n) => Some(n),
            _ => None,
        }
    }
}
