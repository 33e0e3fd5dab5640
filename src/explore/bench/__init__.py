"""`explore bench`: measure which strategy repairs best on a corpus of broken projects."""
