"""cli: what the person at the terminal sees and says — the click group, the console script's entry
(commands), the repairing commands run, resume and demo (repair) and the session they run
(session: the loop under the live view, the gate, the result), the commands on past runs (runs),
the exit on an error (exits), the live view on stderr (live, the only user of rich outside bench),
the gate's prompts (gate), the help text (helptext) and `explore demo`'s project (demo). It sits at
the top and may import any package; bench may import it and it may import bench."""
