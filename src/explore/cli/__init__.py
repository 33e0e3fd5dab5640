"""cli: what the person at the terminal sees and says — the click group, the console script's entry
(commands), the repairing commands run, resume and demo (repair) and the session they run
(session: the loop under the live view, the gate, the result), the commands on past runs (runs),
the exit on an error (exits), the live view on stderr (live; cli is the only user of rich),
the gate's prompts (gate), the help text (helptext), `explore demo`'s project (demo) and `explore
bench` with its tables and chart (bench, bench_render). It sits at the top and may import any package."""
