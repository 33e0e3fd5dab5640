"""run: the run's state machine (loop) and its steps — baseline, targeting, reproduce, the suite,
merging, adoption, known failures, signals, the run's saved state and housekeeping, applying and
undoing a result (the end of a run) and the reports a run writes. It may import every package below
it: model, decide, edges, generators, executors, fanout."""
