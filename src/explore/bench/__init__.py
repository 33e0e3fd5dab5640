"""bench: `explore bench`, measuring which strategy repairs best on a corpus of broken projects.
It sits at the top beside cli and may import any package (cli's live view included)."""
