//! The `scalescope` command: the command line goes to `cli`, whose exit code the process exits with.

fn main() {
    std::process::exit(scalescope::cli::main());
}
