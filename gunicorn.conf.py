"""gunicorn's settings in production: the image's command and docker-compose.yml's web service
run ``gunicorn --config gunicorn.conf.py config.wsgi:application``."""

bind = "0.0.0.0:8000"
workers = 3
timeout = 120
accesslog = "-"
# gunicorn's own format, with the path alone (%(U)s) where it logs the whole request line
# (%(r)s): a query string is never written to the log, as it may hold a secret (the token of a
# set-password link, frontend/accounts.py).
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(f)s" "%(a)s"'
