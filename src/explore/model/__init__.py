"""model: the shared vocabulary of explore — the pydantic models of a run: what the tests said
(testresults), candidates and iterations (candidates), the run's state (runstate) and its `--json`
summary (summary); the options read from flags and pyproject (config), the error tree (errors), token
and cost accounting (usage), the candidate events (events), the one definition of which paths are
test files (testfiles), a test's id, the same in every tree (testids), and how an agent label reads
(agentnames: a chain's members, a fleet's slots). It imports nothing else of explore; every other
package may import it."""
