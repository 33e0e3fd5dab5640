"""cli: what the person at the terminal sees and says — the click commands (commands), the live view
on stderr (live, the only user of rich outside bench), the gate's prompts (gate), the help text
(helptext) and `explore demo` (demo). It sits at the top and may import any package; bench may import
it and it may import bench."""
