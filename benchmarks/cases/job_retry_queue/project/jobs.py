"""A tiny job runner: jobs are retried a given number of times before they count as done."""


def parse_attempts(spec):
    out = {}
    for part in spec.split(","):
        if part.strip():
            name, _, count = part.partition("=")
            out[name.strip()] = int(count)
    return out


def run_jobs(jobs, retries):
    queue = list(jobs)
    left = dict(retries)
    finished = []
    while True:
        job = queue.pop(0)
        if left.get(job, 0) > 0:
            left[job] -= 1
            queue.append(job)
        else:
            finished.append(job)
    return finished


def summary(finished):
    return f"{len(finished)} done: {', '.join(finished)}" if finished else "nothing done"
