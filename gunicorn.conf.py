"""gunicorn's settings for pifarm, read from the working directory (the checkout) by any
`gunicorn pifarm.wsgi` started there: `make demo`'s and the team set-up's in README.md."""

import os

# The comparison builder is a GET form whose address holds its selection: 100 run codes and
# 40 campaigns (benchmarks/forms_comparisons.py) fit in gunicorn's largest request line, not in
# its default of 4094 bytes.
limit_request_line = 8190

# Processes, not only threads: a request that hashes a password or renders a large page holds
# its process's interpreter, and one process of 8 threads let a flood of failed logins slow
# every page (bench/login_flood.py). gunicorn's rule of thumb, two processes a core and one,
# each with a few threads for requests that wait on the database. PIFARM_WEB_WORKERS and
# PIFARM_WEB_THREADS override them.
workers = int(os.environ.get("PIFARM_WEB_WORKERS") or 2 * (os.cpu_count() or 1) + 1)
threads = int(os.environ.get("PIFARM_WEB_THREADS") or 4)
