//! A team's own `cairn`: the same CLI serving the built-in machines and this crate's
//! `review-request` (`machines`, `graph`, `state`, `journal log|verify|audit`).

fn main() -> std::process::ExitCode {
    cairn_cli::main_with(review_request::registry()).into()
}
