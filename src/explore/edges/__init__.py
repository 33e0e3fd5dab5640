"""edges: where explore touches the world — processes (procs, sandbox, homes), git (gitrepo, worktrees,
guard), running and parsing tests (testing, outcomes), reading test code for references to the test
machinery (harness_refs), and the file and git reads of decide's rules (strategy_io, history_io,
witness_io, testcode_io: each `X_io` is the I/O half of decide/X). It may import explore.model and
explore.decide."""
