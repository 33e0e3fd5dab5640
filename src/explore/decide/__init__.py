"""decide: the decisions, pure or nearly so — scoring and ranking candidates, the run history and what
it says about earlier attempts, strategies (parsed from a file's text, and chosen), escalation and
criticality, which tests to target and which are affected by a change, environment failures, secret
redaction, the witness record's verdict, what counts as test code (testcode), and how a suite splits
into shards (shard_plan). It may import only explore.model. The file I/O of these decisions lives in
edges/ (strategy_io reads the strategy files, history_io reads and appends history.jsonl, witness_io
makes and reads the call record, testcode_io reads a change's files from git and the worktree)."""
