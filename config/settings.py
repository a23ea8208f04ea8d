"""Waypoint settings: one module, every knob an environment variable with a default.

The defaults are the embedded set-up (SQLite, local files, a file broker under ``var/``);
production swaps each by environment variables (see the README).
"""

import os
import sys
from importlib.util import find_spec
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.chromium import find_chromium
from core.limits import read_limits

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str = "False") -> bool:
    return os.getenv(name, default).strip().lower() in {"1", "true", "yes", "on"}


def envint(name: str, default: int) -> int:
    raw = os.getenv(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.getenv(name, default).split(",") if item.strip()]


DEBUG = envbool("DEBUG")
# The test suite runs with production settings but needs no secrets and no TLS redirect.
TESTING = "pytest" in sys.modules or sys.argv[1:2] == ["test"]
VAR_DIR = Path(os.getenv("WAYPOINT_VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = os.getenv("SECRET_KEY", "")
if not SECRET_KEY:
    if not (DEBUG or TESTING):
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "waypoint-development-only-not-secret"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG or TESTING else "")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "trajectories",
    "graphs",
    "formats",
    "evaluation",
    "devices",
    "agents",
    "explore",
    "rl",
    "environments",
    "annotate",
    "frontend",
    "fixtures",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Domain errors raised by HTML views become their status with a page (config/errors.py).
    "config.errors.DomainErrorMiddleware",
    # An API request with a query parameter its operation does not document is a 400.
    "config.schema.UnknownQueryParameterMiddleware",
    # Last: turns a throttled login into the locked-out answer (config/login_throttle.py).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
    # The annotation workspace's templates (each app's jinja2/ folder): the page most drawn,
    # several times faster to render in Jinja2 (config/jinja.py). Names not found among the
    # Django templates above are looked up here.
    {
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"environment": "config.jinja.environment"},
    },
]

# A connection serves the requests of this many seconds (0: one per request), saving a connect
# per request under load; it is checked before reuse, so a restarted database costs no request.
WAYPOINT_CONN_MAX_AGE = envint("WAYPOINT_CONN_MAX_AGE", 0 if DEBUG else 60)
if WAYPOINT_CONN_MAX_AGE < 0:
    raise ImproperlyConfigured(
        f"WAYPOINT_CONN_MAX_AGE must be 0 or more seconds, got {WAYPOINT_CONN_MAX_AGE}"
    )
DATABASES = {
    "default": dj_database_url.parse(
        os.getenv("DATABASE_URL", f"sqlite:///{VAR_DIR / 'waypoint.sqlite3'}"),
        conn_max_age=WAYPOINT_CONN_MAX_AGE,
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # The web server and the worker share the file: wait for each other's locks.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
    # WAL lets pages read while the worker writes; NORMAL sync is WAL's recommended pairing.
    DATABASES["default"]["OPTIONS"]["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
    # A transaction takes the write lock when it begins, so it waits (the timeout above) for
    # another writer. A deferred one that reads first and writes later cannot wait: SQLite
    # fails it at once with "database is locked", and concurrent editors got 500s.
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # A file, not memory, so that a Celery worker started by the tests sees the test data.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Login throttling (config/login_throttle.py): failures are counted per account and per client
# address; past the limit, logins for it are refused until the cool-off has passed.
WAYPOINT_LOGIN_FAILURE_LIMIT = envint("WAYPOINT_LOGIN_FAILURE_LIMIT", 10)
WAYPOINT_LOGIN_COOLOFF_SECONDS = envint("WAYPOINT_LOGIN_COOLOFF_SECONDS", 900)
# How many proxies in front of Waypoint append to X-Forwarded-For (docker-compose's nginx: 1).
WAYPOINT_PROXY_HOPS = envint("WAYPOINT_PROXY_HOPS", 0)
AUTHENTICATION_BACKENDS = [
    "core.login_throttle.ThrottledLogins",
    "django.contrib.auth.backends.ModelBackend",
]
# Read through functions, so that the WAYPOINT_ settings above stay the ones that count.
AXES_FAILURE_LIMIT = "core.login_throttle.failure_limit"
AXES_COOLOFF_TIME = "core.login_throttle.cool_off"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # either one past the limit locks
AXES_LOCKOUT_CALLABLE = "core.login_throttle.locked_out"
AXES_CLIENT_IP_CALLABLE = "core.login_throttle.client_ip"
AXES_VERBOSE = False

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.getenv("STATIC_ROOT", str(VAR_DIR / "static")))
MEDIA_URL = "media/"
MEDIA_ROOT = Path(os.getenv("MEDIA_ROOT", str(VAR_DIR / "blobs")))

# Blob storage: local files by default, any S3-compatible store when a bucket is named (with
# the s3 extra installed: django-storages and boto3).
AWS_STORAGE_BUCKET_NAME = os.getenv("AWS_STORAGE_BUCKET_NAME", "")
if AWS_STORAGE_BUCKET_NAME and not all(map(find_spec, ("storages", "boto3"))):
    raise ImproperlyConfigured("S3 storage needs the s3 extra: pip install 'waypoint[s3]'")
if AWS_STORAGE_BUCKET_NAME:
    _blob_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            "endpoint_url": os.getenv("AWS_S3_ENDPOINT_URL") or None,
            "region_name": os.getenv("AWS_S3_REGION_NAME") or None,
            "access_key": os.getenv("AWS_ACCESS_KEY_ID") or None,
            "secret_key": os.getenv("AWS_SECRET_ACCESS_KEY") or None,
            "file_overwrite": True,
            "querystring_auth": True,
        },
    }
else:
    _blob_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT), "base_url": "/" + MEDIA_URL},
    }
STORAGES = {
    "default": _blob_storage,
    # collectstatic names each file by its content (app.3f2a9c1b7d4e.js) and writes a manifest
    # that {% static %} reads: a deploy's changed files get new names, which the proxy lets
    # browsers keep for a year. With DEBUG on, pages name the files as they are in the apps.
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"},
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "project-list"
LOGOUT_REDIRECT_URL = "login"

# Celery: a local file broker by default, served by a real worker (``make run`` starts one).
CELERY_BROKER_URL = os.getenv("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Each test run gets its own queue folder, so parallel runs never take each other's jobs.
    _broker_dir = Path(
        os.getenv("WAYPOINT_BROKER_DIR")
        or VAR_DIR / "broker" / (f"test-{os.getpid()}" if TESTING else "default")
    )
    for _folder in ("queue", "processed", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # A message a lost worker never acknowledged comes back after this many seconds. Jobs may
    # run longer: a redelivered message cannot take a job whose heartbeat is fresh.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 600)
    }
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Jobs (trajectories/jobs.py): heartbeat, when a silent job counts as orphaned, how often it is
# run again before it fails, and the one local folder per job that the reaper cleans.
WAYPOINT_JOB_HEARTBEAT_S = envint("WAYPOINT_JOB_HEARTBEAT_S", 10)
WAYPOINT_JOB_STALE_S = envint("WAYPOINT_JOB_STALE_S", 60)
WAYPOINT_JOB_MAX_ATTEMPTS = envint("WAYPOINT_JOB_MAX_ATTEMPTS", 3)
WAYPOINT_JOB_REAP_S = envint("WAYPOINT_JOB_REAP_S", 30)  # the worker's reaper runs this often
# Agent runs (agents/): how long an episode waits for a free device of its run's pool before
# it fails as a device error, and the step cap of a run that names none.
WAYPOINT_POOL_WAIT_S = envint("WAYPOINT_POOL_WAIT_S", 600)
# ...but no longer than this while no device of the pool can be reached at all (all gone).
WAYPOINT_POOL_UNREACHABLE_S = envint("WAYPOINT_POOL_UNREACHABLE_S", 30)
WAYPOINT_AGENT_MAX_STEPS = envint("WAYPOINT_AGENT_MAX_STEPS", 30)
# The RL environment server (manage.py env_server, rl/): sessions open at once, how long a
# session may go without a request before its episode ends and its device is released, and how
# long a reset waits in line for a free device of the pool.
WAYPOINT_RL_MAX_SESSIONS = envint("WAYPOINT_RL_MAX_SESSIONS", 64)
WAYPOINT_RL_IDLE_S = envint("WAYPOINT_RL_IDLE_S", 120)
WAYPOINT_RL_DEVICE_WAIT_S = envint("WAYPOINT_RL_DEVICE_WAIT_S", 600)
# The agent's window for the memory check (agents/memory_need.py): a value needs memory when
# none of the last this many observations on the solver's path shows it where it is used.
WAYPOINT_MEMORY_WINDOW = envint("WAYPOINT_MEMORY_WINDOW", 5)
if WAYPOINT_MEMORY_WINDOW < 1:
    raise ImproperlyConfigured(
        f"WAYPOINT_MEMORY_WINDOW must be 1 or more observations, got {WAYPOINT_MEMORY_WINDOW}"
    )
WAYPOINT_JOB_TMP_DIR = Path(os.getenv("WAYPOINT_JOB_TMP_DIR", str(VAR_DIR / "jobs-tmp")))
# Uploads larger than FILE_UPLOAD_MAX_MEMORY_SIZE stream to this folder; what a cut-off upload
# leaves there is removed by the reaper after WAYPOINT_UPLOAD_TMP_MAX_AGE_S.
FILE_UPLOAD_TEMP_DIR = os.getenv("FILE_UPLOAD_TEMP_DIR", str(VAR_DIR / "uploads-tmp"))
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
WAYPOINT_UPLOAD_TMP_MAX_AGE_S = envint("WAYPOINT_UPLOAD_TMP_MAX_AGE_S", 6 * 3600)

# The trajectory lists (page and API) keep what they computed in each web process until the
# project's data changes (trajectories/list_cache.py), for at most this many seconds; 0: off.
WAYPOINT_LIST_CACHE_S = envint("WAYPOINT_LIST_CACHE_S", 300)
if WAYPOINT_LIST_CACHE_S < 0:
    raise ImproperlyConfigured(
        f"WAYPOINT_LIST_CACHE_S must be 0 or more seconds, got {WAYPOINT_LIST_CACHE_S}"
    )
# A trajectory's labels, kept in each web process by the version they were read at
# (trajectories/labels/cache.py), for at most this many seconds; 0: off.
WAYPOINT_LABELS_CACHE_S = envint("WAYPOINT_LABELS_CACHE_S", 600)
if WAYPOINT_LABELS_CACHE_S < 0:
    raise ImproperlyConfigured(
        f"WAYPOINT_LABELS_CACHE_S must be 0 or more seconds, got {WAYPOINT_LABELS_CACHE_S}"
    )
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # In process: an entry is named by the project's list_version, which lives in the database,
    # so the processes need not share it.
    "lists": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "waypoint-lists",
        "OPTIONS": {"MAX_ENTRIES": 500},  # pages of 20-40 KiB: at most ~20 MiB
    },
    # In process too: an entry is named by the trajectory's version, which lives in the
    # database. The labels of a trajectory of 50 steps pickle to a few KiB.
    "labels": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "waypoint-labels",
        "OPTIONS": {"MAX_ENTRIES": 2000},
    },
}

# A Redis shared by the web processes, if there is one: REDIS_URL, by default the broker's when
# it is Redis; empty: none.
REDIS_URL = os.getenv(
    "REDIS_URL",
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "",
)
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured(
        f"REDIS_URL must be a redis://, rediss:// or unix:// URL, got {REDIS_URL!r}"
    )
# Django's sessions: in the database, and read from Redis in front of it where there is one.
if REDIS_URL:
    CACHES["sessions"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "waypoint",
    }
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    SESSION_CACHE_ALIAS = "sessions"
else:
    SESSION_ENGINE = "django.contrib.sessions.backends.db"

# ADB: the adb servers whose devices Waypoint sees, as host:port. By default the local one on
# adb's own port (ANDROID_ADB_SERVER_PORT, as the adb command line reads it, else 5037).
ADB_SERVERS = envlist("ADB_SERVERS", f"127.0.0.1:{os.getenv('ANDROID_ADB_SERVER_PORT') or 5037}")

# Import limits (core/limits.py: their defaults and what each means), each an environment
# variable of the same name.
_LIMITS = read_limits()
WAYPOINT_MAX_UPLOAD_BYTES = _LIMITS["WAYPOINT_MAX_UPLOAD_BYTES"]
WAYPOINT_MAX_FILE_BYTES = _LIMITS["WAYPOINT_MAX_FILE_BYTES"]
WAYPOINT_MAX_UNPACKED_BYTES = _LIMITS["WAYPOINT_MAX_UNPACKED_BYTES"]
WAYPOINT_MAX_UNPACK_RATIO = _LIMITS["WAYPOINT_MAX_UNPACK_RATIO"]
WAYPOINT_MAX_ARCHIVE_MEMBERS = _LIMITS["WAYPOINT_MAX_ARCHIVE_MEMBERS"]
WAYPOINT_MAX_IMAGE_SIDE = _LIMITS["WAYPOINT_MAX_IMAGE_SIDE"]
WAYPOINT_MAX_RUN_EPISODES = _LIMITS["WAYPOINT_MAX_RUN_EPISODES"]
WAYPOINT_MAX_SUITE_INSTANCES = _LIMITS["WAYPOINT_MAX_SUITE_INSTANCES"]
# Processes that check an import's files (sha256, image decode, XML parse) beside the reading
# of its lines; 0 is one per CPU, 1 checks them in the importing process itself.
WAYPOINT_IMPORT_WORKERS = envint("WAYPOINT_IMPORT_WORKERS", 0)
# A native export hard-links the blobs (off: copies them) where the export folder and the
# blob storage share a file system; an export's file then IS the stored blob, and editing it in
# place would change the stored one. Off by default; on where exports are only read.
WAYPOINT_EXPORT_LINK_BLOBS = envbool("WAYPOINT_EXPORT_LINK_BLOBS")
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024**2)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024**2

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "config.openapi.WaypointAutoSchema",
    # Bodies are JSON (uploads are multipart, by their own views): a form could not say null.
    "DEFAULT_PARSER_CLASSES": ["trajectories.parsers.JSONParser"],  # depth-limited JSON
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # Domain errors become {"detail": ...} with their status, in one place (config/errors.py).
    "EXCEPTION_HANDLER": "config.errors.api_exception_handler",
}
# The OpenAPI schema and the docs page need a login unless this opens them to anyone.
WAYPOINT_PUBLIC_API_DOCS = envbool("WAYPOINT_PUBLIC_API_DOCS")
SPECTACULAR_SETTINGS = {
    "TITLE": "Waypoint API",
    "DESCRIPTION": "Record, annotate, review and export Android GUI-agent trajectories.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs page's assets are served from our static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Requests and responses get their own components (a file upload is binary, read-only
    # fields are not asked for), and a PATCH body lists its required fields as the view does.
    "COMPONENT_SPLIT_REQUEST": True,
    "COMPONENT_SPLIT_PATCH": False,
    # Every status the code answers is documented (config/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.document_errors",
    ],
    "ENUM_NAME_OVERRIDES": {
        "TrajectoryStatusEnum": "trajectories.models.Status",
        "JobStatusEnum": "trajectories.models.JobStatus",
        "GraphStatusEnum": "graphs.models.GraphStatus",
        # A terminate status (actions, finishing a recording) is one enum.
        "TerminateStatusEnum": "trajectories.validation.TERMINATE_STATUSES",
        # A subgoal's success label, on a subgoal or a memory graph's edge, is one enum.
        "SubgoalSuccessEnum": "trajectories.models.SubgoalSuccess",
        # An anchor's type and a link's relation, on an anchor or in a trajectory's labels.
        "AnchorTypeEnum": "trajectories.models.AnchorType",
        "RelationEnum": "trajectories.models.Relation",
    },
}

# Security: strict unless DEBUG; behind a TLS proxy set SECURE_PROXY_SSL_HEADER_ENABLED.
if not DEBUG and not TESTING:
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "True")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "True")
    SECURE_CONTENT_TYPE_NOSNIFF = True
if envbool("SECURE_PROXY_SSL_HEADER_ENABLED"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "INFO")},
}

# The virtual device (devices/virtual/): the embedded default device, the demo and the test double.
WAYPOINT_VIRTUAL_DEVICE = envbool("WAYPOINT_VIRTUAL_DEVICE")
WAYPOINT_VIRTUAL_DEVICE_HOST = os.getenv("WAYPOINT_VIRTUAL_DEVICE_HOST", "127.0.0.1")
WAYPOINT_VIRTUAL_DEVICE_PORT = envint("WAYPOINT_VIRTUAL_DEVICE_PORT", 6520)
WAYPOINT_VIRTUAL_APPS = envlist("WAYPOINT_VIRTUAL_APPS")  # empty: every demo app
WAYPOINT_VIRTUAL_SEED = envint("WAYPOINT_VIRTUAL_SEED", 0)
WAYPOINT_VIRTUAL_SIZE = os.getenv("WAYPOINT_VIRTUAL_SIZE", "1080x2400")
# Where `manage.py virtual_device` says whether it came up (read by `make run` and /devices/).
WAYPOINT_VIRTUAL_DEVICE_STATUS = Path(
    os.getenv("WAYPOINT_VIRTUAL_DEVICE_STATUS", str(VAR_DIR / "virtual_device.json"))
)
# App packages installed (generated environments, issue 37: devices/services/packages.py): one
# folder each, read by the web server and the workers alike (a shared volume across hosts).
# Tests start with none (a folder of their own, made only when one installs a package).
WAYPOINT_PACKAGES_DIR = Path(
    os.getenv(
        "WAYPOINT_PACKAGES_DIR",
        str(VAR_DIR / (f"packages-test-{os.getpid()}" if TESTING else "packages")),
    )
)
# Chromium for the virtual device's screens and browser tests: CHROMIUM_PATH, else the
# system's, else Playwright's own (`make run` and `make test` provision one: config/provision.py).
CHROMIUM_PATH = find_chromium()[0]

if TESTING:
    # Hashing passwords slowly protects nothing in a test database.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Recording (devices/): leases, settle detection and the live view.
WAYPOINT_LEASE_SECONDS = envint("WAYPOINT_LEASE_SECONDS", 60)  # renewed by the driver's page
# The longest a lease lasts from when it was taken, renewals included (a device can lower it).
WAYPOINT_LEASE_MAX_SECONDS = envint("WAYPOINT_LEASE_MAX_SECONDS", 3600)
# An agent's episode starts no step with less than this left of its lease's maximum length:
# it ends as "time cap" rather than act on a device it may no longer hold.
WAYPOINT_EPISODE_LEASE_MARGIN_S = envint("WAYPOINT_EPISODE_LEASE_MARGIN_S", 30)
WAYPOINT_SETTLE_INTERVAL_MS = envint("WAYPOINT_SETTLE_INTERVAL_MS", 120)  # between two probes
# On the virtual device (its screen version reads -1 while anything animates or loads).
WAYPOINT_VIRTUAL_SETTLE_INTERVAL_MS = envint("WAYPOINT_VIRTUAL_SETTLE_INTERVAL_MS", 50)
WAYPOINT_SETTLE_TIMEOUT_MS = envint("WAYPOINT_SETTLE_TIMEOUT_MS", 5000)  # record it anyway then
WAYPOINT_LIVE_FRAME_MS = envint("WAYPOINT_LIVE_FRAME_MS", 200)  # live view poll while visible
# A project's progress adds up each person's sessions of work: changes further apart than this
# start a new session (the pause between them is not counted as time spent).
WAYPOINT_SESSION_GAP_S = envint("WAYPOINT_SESSION_GAP_S", 600)

# The evaluator's optional LLM judge for M-Acc (manage.py evaluate --judge): any
# OpenAI-compatible API, e.g. http://localhost:8001/v1.
WAYPOINT_JUDGE_URL = os.getenv("WAYPOINT_JUDGE_URL", "")
WAYPOINT_JUDGE_MODEL = os.getenv("WAYPOINT_JUDGE_MODEL", "gpt-4o-mini")
WAYPOINT_JUDGE_API_KEY = os.getenv("WAYPOINT_JUDGE_API_KEY", "")

# The LLM proposer: any OpenAI-compatible chat completions API with image input.
LLM_BASE_URL = os.getenv("LLM_BASE_URL", "")  # e.g. http://localhost:8001/v1; empty: off
LLM_MODEL = os.getenv("LLM_MODEL", "gpt-4o-mini")
LLM_API_KEY = os.getenv("LLM_API_KEY", "")
LLM_TIMEOUT_S = envint("LLM_TIMEOUT_S", 120)  # one request
# Limits on each endpoint shared by every worker (core/llm_limits.py): kept in Redis
# (LLM_LIMITS_URL, by default the broker's when it is Redis), else in lock files under VAR_DIR.
LLM_MAX_IN_FLIGHT = envint("LLM_MAX_IN_FLIGHT", 2)  # requests at once, over all workers
LLM_REQUESTS_PER_MINUTE = envint("LLM_REQUESTS_PER_MINUTE", 0)  # 0: no rate limit
LLM_SLOT_WAIT_S = envint("LLM_SLOT_WAIT_S", 600)  # longest wait for a slot before failing
LLM_LIMITS_URL = os.getenv(
    "LLM_LIMITS_URL",
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "",
)
LLM_HTTP_RETRIES = envint("LLM_HTTP_RETRIES", 4)  # 429 / 5xx / timeouts, with backoff
LLM_INVALID_RETRIES = envint("LLM_INVALID_RETRIES", 2)  # answers that are not valid labels
LLM_BACKOFF_MS = envint("LLM_BACKOFF_MS", 1000)  # first wait; doubles each retry

# Where model requests may go (core/llm.py): hosts (any port) or host:port. Empty: the endpoints
# configured above and those a site admin registers (agents.endpoints), at public addresses; a
# loopback, private or link-local host must be listed here.
WAYPOINT_ENDPOINT_ALLOWED_HOSTS = envlist("WAYPOINT_ENDPOINT_ALLOWED_HOSTS")
# Whether a project's admins may register model endpoints for their project (site admins always
# may register the site's).
WAYPOINT_PROJECT_ENDPOINTS = envbool("WAYPOINT_PROJECT_ENDPOINTS")
