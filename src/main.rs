//! The `ctm` command-line tool.

fn main() {}
