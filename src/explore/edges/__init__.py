"""edges: where explore touches the world — processes (procs, sandbox, homes), git (gitrepo, worktrees,
guard), running and parsing tests (testing, testcode, seal) and reading test code for references to
the test machinery (harness_refs). It may import explore.model and explore.decide."""
