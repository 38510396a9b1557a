fn main() -> std::process::ExitCode {
    mcp_covenant::cli::main()
}
