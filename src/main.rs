fn main() {
    std::process::exit(scalescope::cli::main());
}
