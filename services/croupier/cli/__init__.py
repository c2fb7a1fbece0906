"""The `croupier` command line."""
