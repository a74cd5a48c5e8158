//! `envhost._envhost`, the native module of the `envhost` Python package (docs/python.md): the
//! embedding API of the `envhost` crate for CPython. A [`host::PyHost`] loads environments,
//! computer drivers and agents once; its episodes and computers answer their protocol's
//! operations in-process, with no HTTP. Every
//! call into a guest releases the GIL, so Python threads calling different episodes run on
//! different cores.

mod computer;
mod convert;
mod episode;
mod errors;
mod host;
mod results;
mod turn;

use pyo3::prelude::*;

/// Runs the `envhost` command with `args` (`sys.argv`, the program's name first), the GIL
/// released, until it ends or SIGINT/SIGTERM stops a server: answers its exit status (0; 1 after
/// printing `error: …`; 2 for arguments it refuses).
#[pyfunction]
fn cli(py: Python<'_>, args: Vec<String>) -> u8 {
    py.detach(|| envhost::cli::run(args, envhost::cli::Process::Embedded))
}

#[pymodule]
fn _envhost(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add(
        "EnvhostError",
        module.py().get_type::<errors::EnvhostError>(),
    )?;
    module.add_class::<host::PyHost>()?;
    module.add_class::<episode::PyEpisode>()?;
    module.add_class::<episode::PySnapshot>()?;
    module.add_class::<computer::PyComputer>()?;
    module.add_class::<computer::PyComputerSnapshot>()?;
    module.add_class::<results::PyToolResult>()?;
    module.add_class::<turn::PyTurn>()?;
    module.add_function(wrap_pyfunction!(cli, module)?)?;
    module.add_function(wrap_pyfunction!(results::_tool_result, module)?)?;
    Ok(())
}
