"""One settings class for every process, read from ``CUSTODY_*`` variables.

Built in each ``main()`` and passed down; nothing reads the environment at
import time. By default every piece of state of the embedded stack lives under
``CUSTODY_HOME`` (``./.custody``): Temporal's SQLite file, objects, staging,
logs and keys, so one folder holds it and can be deleted to start clean.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from custody import cpus
from custody.limits import PolicyLimits
from custody.queues import IO_TASK_QUEUE, OCR_TASK_QUEUE


class Limits(BaseSettings, PolicyLimits):
    """The intake policy (``custody.limits``), read from ``CUSTODY_LIMIT_*``."""

    model_config = SettingsConfigDict(env_prefix="CUSTODY_LIMIT_", frozen=True)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CUSTODY_", frozen=True, extra="ignore")

    env: Literal["development", "production"] = "development"
    home: Path = Field(default_factory=lambda: Path.cwd() / ".custody")

    # Temporal
    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    temporal_ui_port: int = 8233
    # TLS to the frontend (custody.temporal.tls_config); a CA, client cert or
    # server name turns it on too. Cert and key together make it mTLS.
    temporal_tls: bool = False
    temporal_tls_ca_file: Path | None = None
    temporal_tls_cert_file: Path | None = None
    temporal_tls_key_file: Path | None = None
    temporal_tls_server_name: str | None = None
    temporal_api_key: SecretStr | None = None  # e.g. Temporal Cloud; sent as a bearer token
    io_task_queue: str = IO_TASK_QUEUE
    ocr_task_queue: str = OCR_TASK_QUEUE
    # Worker Versioning (workers.common.deployment_config): both set, the worker joins
    # this worker deployment as this build id; unset, it runs unversioned.
    deployment_name: str | None = None
    build_id: str | None = None

    # Object store
    store: Literal["local", "s3"] = "local"
    store_dir: Path | None = None
    s3_endpoint_url: str | None = None
    s3_bucket: str = "custody"
    s3_prefix: str = ""
    s3_region: str = "us-east-1"
    s3_access_key_id: SecretStr | None = None
    s3_secret_access_key: SecretStr | None = None
    # S3 Object Lock (COMPLIANCE) retention for evidence and ledger objects.
    s3_object_lock_days: int | None = Field(default=None, ge=1)
    # SSE-KMS on every write (custody.stores.s3), under this KMS key ID or ARN.
    s3_sse_kms_key_id: str | None = None

    # Staging
    staging_dir: Path | None = None
    staging_max_age_s: float = Field(default=3600.0, gt=0)
    # In production staging must be RAM (tmpfs) or a volume the operator vouches is
    # encrypted at rest; see workers.common.check_staging_at_rest.
    staging_encrypted_volume: bool = False
    sweep_interval_s: float = Field(default=60.0, gt=0)

    # Retention (custody.stores.expiry, starter.evidence.retention). Scratch prefixes expire
    # by age (the I/O worker's sweep; on S3 lifecycle.json also expires work/ and
    # manual/, not intake/): intake/ and work/, manual/ (the parked lane); an
    # intake object with no workflow and no record after the grace is an orphan.
    # Evidence goes only after its policy's period ("name=days,..."; 2557 days:
    # 7 years) and an evidence owner's approval.
    scratch_max_age_days: float = Field(default=7.0, gt=0)
    manual_max_age_days: float = Field(default=30.0, gt=0)
    orphan_grace_s: float = Field(default=86400.0, gt=0)
    retention_sweep_interval_s: float = Field(default=3600.0, gt=0)
    retention_policies: str = "evidence=2557"

    # OCR
    # Engine lanes: pages recognised at once per OCR worker (activities.engines.lanes).
    ocr_concurrency: int = Field(default=1, ge=1)
    # Documents an OCR worker holds beyond its lanes, so their staging and page
    # writes overlap the engine; the OCR pool's default limit is lanes + prefetch.
    ocr_prefetch: int = Field(default=1, ge=0)
    # A page still running after this stops heartbeating, so its attempt is
    # abandoned and retried (a hung page), while slow pages under load are not.
    ocr_page_deadline_s: float = Field(default=180.0, gt=0)
    # How long one store call inside OCR waits out an outage before the attempt fails.
    ocr_store_wait_s: float = Field(default=60.0, ge=0)
    torch_threads: int = Field(default=0, ge=0)  # 0: cores / concurrency
    # activities.engines.selection: rapidocr (PP-OCRv6, measured most accurate), tesseract
    # (the light option), hybrid (EasyOCR re-reads the words Tesseract is unsure of), or
    # easyocr (CRAFT + EasyOCR, pre-#6).
    ocr_engine: Literal["rapidocr", "tesseract", "hybrid", "easyocr"] = "rapidocr"
    # Where the engine runs: auto (CUDA when onnxruntime/torch offer it), cpu, or cuda.
    ocr_device: Literal["auto", "cpu", "cuda"] = "auto"
    # CPUs of the engine's own (custody.cpus): auto, off, or a list like "2,3".
    engine_cpus: str = "auto"
    # Batched OCR (activities.engines.batched, rapidocr only): at most this many pages of
    # the documents in flight share a detector call; 0: off, a page per lane (the CPU
    # default). The GPU pool batches (deploy/k8s/worker-ocr-gpu.yaml).
    ocr_batch_pages: int = Field(default=0, ge=0)
    # Its helper processes (batches in flight); 0: one per engine core on a CPU, 4 on a GPU.
    ocr_batch_streams: int = Field(default=0, ge=0)
    # How long a batch waits for more pages than are already queued (0: none).
    ocr_batch_wait_ms: float = Field(default=0.0, ge=0)
    # A batched engine on CUDA: onnxruntime's CUDA provider, or TensorRT through it.
    ocr_gpu_provider: Literal["cuda", "tensorrt"] = "cuda"
    ocr_cuda_graphs: bool = False  # replay the detector as captured CUDA graphs
    # Routing (starter.client.route): with a GPU queue named, a new document goes there
    # while that queue's backlog is under ocr_gpu_max_backlog, else to ocr_task_queue.
    ocr_gpu_task_queue: str | None = None
    ocr_gpu_max_backlog: int = Field(default=32, ge=0)
    ocr_route_refresh_s: float = Field(default=2.0, ge=0)  # how stale a backlog reading may be
    # From `custody bench ocr` calibration of the default engine on the shared
    # corpus and its degraded classes (docs/ocr-benchmark.md, "Calibrated bands").
    confidence_floor: float = Field(default=0.50, ge=0, le=1)
    confidence_review: float = Field(default=0.80, ge=0, le=1)

    # I/O pool
    io_concurrency: int = Field(default=8, ge=1)

    # Admission control (starter.client.admission): bounds on work accepted but not yet OCR'd.
    admission_max_waiting: int = Field(default=500, ge=1)
    admission_max_bytes: int = Field(default=2 * 1024**3, ge=1)
    admission_reserved: int = Field(default=10, ge=0)  # extra slots for priority documents
    admission_source_rate: float = Field(default=20.0, gt=0)  # per source, documents/s
    admission_source_burst: int = Field(default=100, ge=1)
    # Over all of a tenant's sources, so rotating source ids cannot escape the limit.
    admission_tenant_rate: float = Field(default=100.0, gt=0)  # per tenant, documents/s
    admission_tenant_burst: int = Field(default=500, ge=1)
    admission_refresh_s: float = Field(default=1.0, ge=0)  # how stale a waiting count may be
    # Past the bounds, park work under manual/ for an operator instead of refusing it.
    admission_manual_lane: bool = False
    # The manual lane's share per tenant: parked documents and their bytes.
    admission_manual_max_per_tenant: int = Field(default=100, ge=1)
    admission_manual_max_bytes_per_tenant: int = Field(default=1024**3, ge=1)
    # Uploads a tenant may hold open at the edge at once, and their bytes
    # (declared up front, counted as they stream): slow uploads cannot pile up.
    edge_max_inflight_per_tenant: int = Field(default=8, ge=1)
    edge_max_inflight_bytes_per_tenant: int = Field(default=512 * 1024**2, ge=1)
    # The slowest body the edge waits for: fewer than this many bytes in any
    # window of edge_body_window_s seconds and the upload is cut off (408).
    edge_min_body_bytes: int = Field(default=16 * 1024, ge=1)
    edge_body_window_s: float = Field(default=10.0, gt=0)
    # A request's headers must be complete this long after its connection opens.
    edge_header_timeout_s: float = Field(default=10.0, gt=0)
    # uvicorn's: idle keep-alive seconds, and the most header bytes it buffers.
    edge_keep_alive_s: float = Field(default=5.0, gt=0)
    edge_max_header_bytes: int = Field(default=16 * 1024, ge=1024)
    # The synchronous preview (starter.edge.preview): previews read at once in the
    # edge process (one: an engine page already uses the cores it is given),
    # requests that may wait beyond them (then 429), and the deadline from a
    # preview's last body byte to its answer (then 504).
    preview_concurrency: int = Field(default=1, ge=1)
    preview_queue: int = Field(default=3, ge=0)
    preview_deadline_s: float = Field(default=30.0, gt=0)
    # Accepted -> searchable target; the edge reports the share of documents within it.
    intake_slo_s: float = Field(default=900.0, gt=0)
    # How often workers re-read the live pool limits (custody.state.pools).
    pool_refresh_s: float = Field(default=5.0, gt=0)
    # Overload past admission (workers.budget, workers.breaker): retries each worker
    # process may start per minute before failing them fast; consecutive failures
    # that open a breaker around the store or the OCR engine, and how long it stays open.
    retry_budget_per_min: int = Field(default=120, ge=1)
    breaker_failures: int = Field(default=5, ge=1)
    breaker_open_s: float = Field(default=30.0, gt=0)
    # Prometheus endpoints of the workers (None: off); each also serves the SDK's metrics.
    io_metrics_port: int | None = Field(default=None, ge=1, le=65535)
    ocr_metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_host: str = "127.0.0.1"
    # OpenTelemetry tracing across edge, workflow and activities: off by default.
    otel: bool = False
    otel_endpoint: str | None = None  # OTLP/HTTP traces URL; None: spans to stderr

    # Evidence signing (Ed25519): an environment secret, or key files in a folder.
    signing_key: SecretStr | None = None
    signing_dir: Path | None = None
    # Where ledger checkpoints are also published, beyond the workers' reach
    # (custody.ledger.checkpoints): a folder the operator controls, or an Object Lock bucket.
    witness_dir: Path | None = None
    witness_s3_bucket: str | None = None
    witness_lock_days: int = Field(default=3650, ge=1)
    # Independent witnesses (custody.ledger.witness, C2SP tlog-witness) that cosign each
    # checkpoint: their URLs and cosigner vkeys, comma-separated in the same order, and
    # how many cosignatures verification requires (default: 1 when a key is given).
    witness_url: str = ""
    witness_keys: str = ""
    witness_quorum: int | None = Field(default=None, ge=0)
    # The embedded stack's own witness (``custody up``): its port; default UI port + 2.
    witness_port: int | None = Field(default=None, ge=1, le=65535)
    # Trust anchor (starter.evidence.trust): the signing keys' SHA-256 fingerprints that
    # verification accepts, comma-separated; empty: the keys of the signing folder.
    trust_fprs: str = ""

    # Keys (custody.keys): a 0700 folder of key files, or one JSON secret that wins over it.
    keys_dir: Path | None = None  # default CUSTODY_HOME/keys
    keys_json: SecretStr | None = None
    # The SDK and the CLI's Temporal commands refuse a home without keys
    # (starter.client.connect): it is the wrong folder, not a deployment. True: a
    # development deployment kept without keys on purpose (the tests' in-process
    # workers), its payloads and objects plaintext; production always needs keys.
    allow_plaintext: bool = False
    # Drain window after upgrading to signed references (custody.refs): until this
    # time, unsigned references of workflows started before the upgrade are accepted.
    refs_unsigned_until: datetime | None = None
    # The Web UI's codec server (starter.local.codec_server): bearer token and port.
    codec_token: SecretStr | None = None  # default: the keyring's token
    codec_port: int | None = Field(default=None, ge=1, le=65535)  # default: UI port + 1

    # Egress (custody.egress): how releases reach recipients' S3 and HTTPS endpoints.
    egress_s3_endpoint_url: str | None = None  # None: AWS; recipients name bucket/prefix
    egress_s3_region: str = "us-east-1"
    egress_s3_access_key_id: SecretStr | None = None
    egress_s3_secret_access_key: SecretStr | None = None
    egress_ca_file: Path | None = None  # a private CA for recipients' HTTPS servers
    #: Delivery attempts of a release (the workflow's retry policy) and their backoff.
    egress_delivery_attempts: int = Field(default=8, ge=1)
    egress_delivery_interval_s: float = Field(default=5.0, gt=0)
    egress_delivery_max_interval_s: float = Field(default=300.0, gt=0)
    #: How long one delivery attempt may take; it tries once (the attempts above
    #: are the only retry: workflows.retries.deliver).
    egress_push_deadline_s: float = Field(default=60.0, gt=0)
    #: Where recipients' channels may go (activities.egress.reach): HTTPS recipient
    #: domains, comma-separated (each also allows its subdomains; empty: any public
    #: address), and the one folder outbox recipients may be under (in production
    #: the outbox is refused without it).
    egress_https_allowed_domains: str = ""
    egress_outbox_root: Path | None = None
    #: Where an S3 recipient's role is assumed (activities.egress.s3_access); None: AWS STS.
    egress_sts_endpoint_url: str | None = None
    #: Releases at the edge (POST /v1/releases): the body's size, each tenant's rate
    #: (releases/s, with a burst) and its releases running at once.
    edge_release_body_bytes: int = Field(default=64 * 1024, ge=1024)
    edge_release_rate: float = Field(default=1.0, gt=0)
    edge_release_burst: int = Field(default=20, ge=1)
    edge_max_running_releases_per_tenant: int = Field(default=20, ge=1)

    # People (custody.operators): the key file a command acts with. No default: a
    # decision without one is refused (OPERATOR_REQUIRED). A new identity lasts this long.
    operator_credential: Path | None = None
    operator_days: float = Field(default=365.0, gt=0)
    # Review (workflows.review): a document that needs a person is escalated after the
    # deadline and quarantined REVIEW_EXPIRED after the expiry, which must come before
    # the scratch age takes its OCR output (checked below).
    review_deadline_s: float = Field(default=2 * 86400.0, gt=0)
    review_expiry_s: float = Field(default=6 * 86400.0, gt=0)

    log_level: str = "INFO"
    log_format: Literal["auto", "json", "console"] = "auto"

    limits: Limits = Field(default_factory=Limits)

    @field_validator("engine_cpus")
    @classmethod
    def _engine_cpus(cls, value: str) -> str:
        return cpus.parse(value)

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.store == "s3" and not self.s3_bucket:
            raise ValueError("CUSTODY_S3_BUCKET is required when CUSTODY_STORE=s3")
        if self.confidence_floor > self.confidence_review:
            raise ValueError("CUSTODY_CONFIDENCE_FLOOR must not exceed CUSTODY_CONFIDENCE_REVIEW")
        if not self.review_deadline_s < self.review_expiry_s < self.scratch_max_age_days * 86400:
            raise ValueError(
                "CUSTODY_REVIEW_DEADLINE_S < CUSTODY_REVIEW_EXPIRY_S < the scratch age, please"
            )
        if (self.temporal_tls_cert_file is None) != (self.temporal_tls_key_file is None):
            raise ValueError(
                "CUSTODY_TEMPORAL_TLS_CERT_FILE and CUSTODY_TEMPORAL_TLS_KEY_FILE go together"
            )
        return self

    @property
    def objects_dir(self) -> Path:
        return self.store_dir or self.home / "objects"

    @property
    def staging_path(self) -> Path:
        return self.staging_dir or self.home / "staging"

    @property
    def signing_path(self) -> Path:
        return self.signing_dir or self.home / "signing"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def temporal_db(self) -> Path:
        return self.home / "temporal.db"

    def cpu_plan(self) -> cpus.CpuPlan | None:
        """The engine's cores and the rest's (custody.cpus), from this process's CPUs."""
        return cpus.plan(self.engine_cpus, self.ocr_concurrency, self.ocr_engine)

    def effective_torch_threads(self) -> int:
        if self.torch_threads:
            return self.torch_threads
        return max(1, (os.cpu_count() or 1) // self.ocr_concurrency)
