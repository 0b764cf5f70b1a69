//! The `cairn` binary: the CLI with the built-in machines.

fn main() -> std::process::ExitCode {
    cairn_cli::main_with(cairn::Registry::builtin()).into()
}
