use std::process::ExitCode;

fn main() -> ExitCode {
    rkb::main()
}
