"""bench: measuring which strategy repairs best on a corpus of broken projects — loading the corpus
(corpus), running explore on each case in scratch copies (runner), judging each result on its own
(judge), aggregating (results) and comparing two results files (compare). It sits below cli, which
holds the `explore bench` command and its tables and chart (cli/bench, cli/bench_render), and may
import any package below it; it never imports cli or rich."""
