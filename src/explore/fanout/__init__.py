"""fanout: one iteration's candidates side by side — the scheduler that fans them out over the
executor, one candidate's propose/apply/test/score (candidate), and the unsharded confirmation of a
winner before it is merged (confirmation). It may import explore.model, decide, edges, generators
and executors."""
