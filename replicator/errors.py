"""Error classes carrying OpenLogReplicator-compatible numeric codes.

Every error the replicator raises on purpose is a :class:`ReplicatorError` with a
five-digit code (same families as OpenLogReplicator: 1xxxx runtime, 2xxxx data/file
content, 3xxxx configuration, 4xxxx redo log format, 5xxxx internal, 6xxxx warnings)
and a ``retriable`` flag. The CLI prints ``ERROR CCCCC message`` and exits non-zero,
never a traceback. ``docs/errors.md`` is generated from :data:`CATALOGUE`.
"""

from __future__ import annotations


class ReplicatorError(Exception):
    """Base class: an error with a numeric code, shown to users without a traceback."""

    code: int = 50000
    retriable: bool = False

    def __init__(self, message: str, code: int | None = None, *, retriable: bool | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code
        if retriable is not None:
            self.retriable = retriable

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:  # pragma: no cover - trivial
        return f"{self.code:05d} {self.message}"


class ConfigError(ReplicatorError):
    """Invalid configuration (3xxxx) or configuration JSON content (2xxxx)."""

    code = 30001


class ConfigPathError(ConfigError):
    """A configuration error located at a key path such as ``source[0].format.xid``.

    ``path`` is empty when the problem concerns the whole document.
    """

    def __init__(self, message: str, code: int | None = None, *, path: str = ""):
        super().__init__(message, code)
        self.path = path


class DataError(ReplicatorError):
    """Bad file content: checkpoint/schema JSON, values (2xxxx)."""

    code = 20001


class RedoLogError(ReplicatorError):
    """A redo log failed a format check (4xxxx)."""

    code = 40001


class RuntimeFailure(ReplicatorError):
    """Runtime failure: files, memory, network (1xxxx)."""

    code = 10001


class InternalError(ReplicatorError):
    """A state the code believed impossible (5xxxx)."""

    code = 50000


# The catalogue of every code used on purpose; documented in docs/errors.md.
CATALOGUE: dict[int, str] = {
    10001: "file cannot be opened",
    10002: "configuration file is locked by another instance",
    10003: "output file already exists and append is 0",
    10004: "configuration file has a bad size",
    10005: "short read",
    10006: "file cannot be opened for writing",
    10007: "short write",
    10009: "archived redo log could not be opened after all tries",
    10011: "file seek failed",
    10012: "state directory cannot be read",
    10015: "caught signal",
    10016: "memory allocation failed / memory pool exhausted",
    10021: "online: database not in ARCHIVELOG mode",
    10022: "online: minimal supplemental logging (SUPPLEMENTAL_LOG_DATA_MIN) is off",
    10023: "online: no data in SYS.V_$DATABASE",
    10024: "online: cannot position by time on a standby database",
    10025: "online: no SCN found for reader.start-time / start-time-rel",
    10026: "online: cannot position by relative time on a standby database",
    10029: "online: cannot read the database's current SCN",
    10030: "online: no redo log sequence holds the start SCN",
    10032: "online: database parameter missing from V$PARAMETER",
    10033: "online: database property missing from DATABASE_PROPERTIES",
    10034: "online: grants missing for a view or dictionary table (the GRANT to run is printed)",
    10035: "online: the dictionary cannot be read AS OF the start SCN (too old or invalid)",
    10036: "online: no standby redo log files",
    10037: "online: no online redo log files",
    10038: "online: unknown database role",
    10040: "schema checkpoint missing (offline)",
    10041: "key or tag columns not found in a table (filter rule)",
    10042: "unsupported database character set",
    10046: "unsupported national character set",
    10047: "redo log read failed",
    10048: "redo log processing failed",
    10051: "online: database or driver error (ORA-/DPY- text included), e.g. login refused",
    10052: "schema checkpoint missing (batch): set reader.start-scn",
    10053: "stream writer/client: network receive failed",
    10054: "stream client: network send failed",
    10055: "stream writer: client request larger than 1024 bytes (connection closed)",
    10056: "stream writer: client disconnected",
    10057: "Kafka: permanent delivery failure or fatal producer error",
    10058: "Kafka: producer configuration rejected or bootstrap.servers missing",
    10060: "Kafka: produce call failed",
    10061: "network writer: cannot listen, or socket/I-O thread failure",
    10062: "stream client: cannot connect",
    10064: "ZeroMQ: bind failed",
    10065: "ZeroMQ: context creation failed",
    10066: "ZeroMQ: socket creation failed",
    10068: "online: DBTIMEZONE is not ±HH:MM (set reader.db-timezone)",
    10067: "old swap file of an earlier run deleted at start (warning)",
    10069: "timestamp out of range",
    10070: "bad OLR_LOG_TIMEZONE value",
    10073: "metrics: cannot listen on the metrics.bind address",
    10091: "stream writer: no client requested replication (START/CONTINUE) in time",
    10092: "Kafka: message too large for the producer or broker (names the transaction)",
    10093: "stream writer: a client's START the daemon cannot honour (FAILED_START; the client may START again)",
    10100: "file writer: output file shorter than (or missing at) the position the checkpoint confirmed",
    10101: "batch run: the writer did not deliver every message (e.g. Kafka unreachable)",
    10102: "state directory: nothing could be saved for too long (disk full?)",
    10110: "batch run: the output holds bytes no run of this config wrote, or the output of an earlier run over "
    "other redo (refused: appending would duplicate or mix runs; the message says what to do)",
    10120: "a save at the stop failed: the confirmed position or the final schema checkpoint was not written "
    "(the stop is not clean: the restart repeats output or re-reads more redo)",
    10121: "the start position could not be saved (before any message was written)",
    10122: "state directory not writable (checked at start)",
    10123: "source.containers: another PDB's schema checkpoint at the restart SCN is missing or unusable",
    10190: "unknown engine (--engine or REPLICATOR_ENGINE), or the native engine required but not built",
    10210: "redo source (sftp): SSH connection not (re)established after reconnect-tries tries",
    10211: "redo source (sftp): server host key unknown or changed (refused)",
    10212: "redo source (sftp): SSH login refused for the user and key",
    10213: "redo source (sftp): private key file cannot be read or decrypted",
    10214: "redo source (sftp): remote file cannot be read (permission, server error)",
    10220: "redo source (asm): cannot open a session to the ASM instance",
    10221: "redo source (asm): file cannot be opened (DBMS_DISKGROUP.GETFILEATTR/OPEN failed)",
    10222: "redo source (asm): DBMS_DISKGROUP.READ failed",
    10223: "redo source (asm): directory listing failed (V$ASM_ALIAS)",
    10310: "bench --compare-local: a whole-process run (local or remote) failed; its own error follows",
    10350: "redo source (sftp): a reader process cannot start, or ended mid-file and restarting it did not help",
    10351: "redo source (sftp): the server refused the SFTP session (no sftp subsystem)",
    10360: "bad REPLICATOR_DECODE_WORKERS value (native decode worker threads: 0 to 16)",
    10400: "verify: the sink does not hold exactly what the redo holds (missing, duplicated or differing changes)",
    10401: "verify: the sink's writer or format cannot be verified (supported: OpenLogReplicator JSON in files, Kafka, client captures)",
    10402: "verify: the sink cannot be read (file missing, unreadable message, Kafka topic not read to its end in time)",
    10403: "stream check: a checkpoint's digests differ from the changes received since the previous checkpoint",
    10404: "stream check: a checkpoint does not continue the previous one (a checkpoint and its changes were lost)",
    10405: "stream check: checkpoint messages carry no digests (format.checkpoint-digests is off)",
    20001: "JSON parse error, or database name mismatch in a checkpoint",
    20002: "bad XID string",
    20003: "JSON field missing, of the wrong type, too long, or not expected",
    20005: "128-bit field is not a 2-element array",
    20006: "checkpoint offset is not a multiple of 512",
    20007: "configured owners differ from the checkpoint users",
    20008: "dictionary row ID is not an 18-character ROWID",
    20100: "spark job --available-now: the topic ends inside transactions (events still pending)",
    20101: "spark job: a checkpoint's digests differ from what the job received since the previous checkpoint "
    "(format.checkpoint-digests): the batch is not committed",
    20120: "<name>-chkpt.json: its pos is not in the redo this run reads (no log of that sequence, or an "
    "offset outside it)",
    20121: "<name>-chkpt.json: its output size does not end the confirmed message (the file or the checkpoint "
    "was changed)",
    20122: "<name>-chkpt.json and the schema checkpoint are of different incarnations (resetlogs)",
    30001: "invalid configuration value",
    30002: "invalid command-line arguments",
    30005: "file writer: bad % pattern in output",
    30006: "file writer: a fixed output name needs append=1",
    30007: "file writer: rotation needs max-file-size",
    30008: "stream writer: malformed uri (network: no ':'; zeromq: not tcp://HOST:PORT or ipc://PATH)",
    30009: "Kafka property defined more than once",
    30010: "Kafka property 'message.max.bytes' must not be set by the user",
    30120: "bench: no redo log files to measure (none given, or none found in the directories)",
    30140: "redo source (sftp): known-hosts file missing while accept-unknown-host-key is 0",
    30150: "a key of the other config dialect: source[0].memory or source[0].state in a 2.0 config "
    "(2.0 reads them at the top level; `replicator config upgrade` moves them)",
    30151: "config upgrade: the config cannot be expressed in the target dialect (the first problem is named)",
    30161: "source.containers: a container's schema checkpoint is not another PDB of the first one's database",
    30380: "redogen SQL script: statement outside the supported subset, or malformed",
    30381: "redogen SQL script: expression, function or value outside the supported subset",
    30382: "redogen SQL script: the statement fails on the script's tables (no such table/column, key, size)",
    30383: "redogen SQL script: schema checkpoint unreadable or without the script's table",
    40001: "redo file: bad block size",
    40002: "redo file: bad block header (block number or sequence), or header fields that disagree (NAB)",
    40003: "redo file: unsupported database version",
    40004: "redo file: bad first/next SCN",
    40005: "redo file: not an Oracle redo log (bad magic)",
    40006: "redo file: block checksum mismatch",
    40007: "redo file: truncated (ends before NAB)",
    40008: "redo file: bad record framing",
    40009: "redo file: bad change vector",
    40010: "redo file: empty read",
    40120: "redo log of another database: DBID or name differs from the first log of the run",
    40121: "redo log of another instantiation: activation ID differs from the checkpoint's",
    40122: "redo log's RESETLOGS SCN differs from the checkpoint's incarnation of its RESETLOGS_ID",
    40123: "redo log of another redo thread than the one followed",
    40130: "retired, no longer given (never reused): a run of several containers stopped when one XID was open "
    "in two containers at once; the memory pool now keys such a run's transactions by CON_ID and XID",
    50000: "internal error: a state the code believed impossible (please report it)",
    50002: "dictionary columns out of SEGCOL# sequence",
    50003: "LOB pages of one LOB report different page sizes (the first is kept)",
    50006: "redo: a field the change vector's layout requires is missing (OLR's check; file, block, offset given)",
    50009: "NUMBER value cannot be decoded",
    50010: "character set mapping failed",
    50019: "dictionary tracking: a SYS column has an unexpected type",
    50020: "dictionary tracking: a SYS column value is invalid (not a non-negative integer...)",
    50022: "dictionary row whose ROWID already exists (checkpoint load, or insert by dictionary tracking)",
    50024: "schema: two dictionary rows share a unique key (e.g. one OBJ# for two objects)",
    50034: "an object number maps to two tables",
    50048: "invalid resetlogs value: a redo log of another incarnation than the checkpoint's (OLR's check; "
    "RESETLOGS is not followed)",
    50061: "redo: a change vector field is too short for its header, or a NULL column's field is not empty "
    "(OLR's check; file, block, offset given)",
    50067: "filter condition: invalid condition (does not parse to one boolean)",
    50069: "flag 0x10000 (experimental XMLTYPE) without an XDB.XDB$TTSET row of flags 0",
    60002: "value cannot be decoded",
    60003: "LOB locator cannot be read (location number given); the column is left out",
    60004: "LOB page missing from the LOB index; the value stops there",
    60005: "BasicFile LOB page missing from the transaction's redo; the column is left out",
    60006: "dump of the LOB locator behind warning 60005 or 60007",
    60007: "LOB length differs from the pages the redo holds; the column is left out",
    60008: "character cannot be decoded in its character set (printed as U+FFFD)",
    60010: "partial rollback without a matching change",
    60011: "transaction without a beginning skipped",
    60017: "minimal supplemental log missing, or a redo inconsistency in the pieces of a row",
    60018: "checkpoint file could not be written",
    60019: "referenced schema checkpoint missing or unusable",
    60021: "no LOB index (SYS_IL...) found for a LOB column",
    60022: "LOB tablespace missing or of an unknown block size (page size 8132 used)",
    60024: "online log reused before it was read to the end: continued from its archived copy",
    60026: "online: trailing '/' stripped from an archive destination parameter",
    60027: "archived log for a sequence not found",
    60028: "cannot get a sequence from a file name (log-archive-format)",
    60029: "file writer: one message exceeds max-file-size",
    60030: "file writer: rotation size too low (name did not change)",
    60031: "writer queue full: waiting for confirmations (Kafka delivery reports or client CONFIRM)",
    60032: "stream writer: unknown or out-of-place request code",
    60033: "stream writer: undecodable request (hex dump logged)",
    60034: "UPDATE sets NULL in a NOT NULL column",
    60380: "redogen SQL script: a statement the database would refuse is skipped (as SQL*Plus goes on)",
    60035: "stream writer: wrong database name or CONFIRM without c_scn",
    60036: "binary XMLTYPE (flag 0x10000) is not decoded: printed as hex",
    60040: "unknown opcode skipped (logged once per opcode)",
    60041: "CDB: change vectors of a container the run does not replicate are skipped (logged once per "
    "container, counted; the counts per CON_ID at the end of the run)",
    60190: "native engine unavailable (extension not built; the reason follows): the python engine is used",
    60210: "redo source: connection lost; reconnecting with backoff (the read resumes at the same offset)",
    60211: "redo source: connection restored; reading resumes where it stopped",
    60212: "redo source (sftp): accept-unknown-host-key is set: the host key is not checked",
    60350: "redo source (sftp): a reader process ended mid-file; another one resumes at the same byte",
    60351: "redo source (sftp): the file's read resumed in a new reader process",
    60080: "stream writer: second client rejected while one is connected",
    60081: "stream writer: client dropped",
    60082: "stream writer: CONFIRM of a position never sent (ignored)",
    60084: "zeromq writer: a peer broke ZMTP (signature, version, mechanism, socket type, frame); closed",
    60085: "stream writer: CONTINUE from a position never sent or confirmed (refused, nothing skipped)",
    60083: "writer: messages left unconfirmed at shutdown (sent again after a restart)",
    60240: "stream writer: a resumed client's position did not come again after a restart (re-sent)",
    60100: "file writer: the checkpoint's output file is not one of the configured output (output changed)",
    60101: "file writer: output already holds messages but no confirmed position exists (replay appended)",
    60102: "Kafka: a warning or error line of librdkafka itself, printed as a warning (librdkafka retries "
    "it; what is fatal stops the run with 10057, 10060 or 10092)",
    60103: "stream writer: a client did not authenticate (auth-token) or its TLS failed; connection closed",
    60104: "a network or zeromq writer listens beyond loopback without auth-token",
    60105: "config reload: changed keys that only a restart applies (named; not applied now)",
    60110: "a filter.table rule selects no table of the schema checkpoint (the rule and the nearest name given)",
    60111: "check-config: the writer's Kafka brokers do not answer, or its listening address is taken",
    60120: "writer cannot deliver at start (Kafka broker unreachable): the daemon waits before READY",
    70008: "Kafka: delivery failed or producer restarted (messages produced again)",
    70009: "Kafka: librdkafka error callback",
}
