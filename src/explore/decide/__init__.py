"""decide: the decisions, pure or nearly so — scoring and ranking candidates, the run history and what
it says about earlier attempts, strategies, escalation and criticality, which tests to target and
which are affected by a change, environment failures, secret redaction and the witness record's
verdict, and how a suite splits into shards (shard_plan). It may import only explore.model. (history's JSONL, strategy's TOML files and witness's
`read` still do their own file I/O here; issue 25 moves those halves to the edges.)"""
