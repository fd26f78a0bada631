"""gunicorn's settings for pifarm, read from the working directory (the checkout) by any
`gunicorn pifarm.wsgi` started there: `make demo`'s and the team set-up's in README.md."""

# The comparison builder is a GET form whose address holds its selection: 100 run codes and
# 40 campaigns (benchmarks/forms_comparisons.py) fit in gunicorn's largest request line, not in
# its default of 4094 bytes.
limit_request_line = 8190
