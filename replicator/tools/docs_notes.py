"""One-line meanings of the config keys, for the generated docs/configuration.md.

Types, allowed ranges and defaults come from the pydantic models themselves
(:mod:`replicator.tools.docs_gen` reads them); only the meaning is written here, keyed by
``<section>.<key>``. A field's pydantic ``description`` is used when it has no entry
here. A test fails when a key has neither, so the reference cannot silently fall behind
the code.
"""

from __future__ import annotations

NOTES: dict[str, str] = {
    # top level
    ".version": 'schema version: "1.9.0" or "2.0.0" (the config dialect; `replicator config upgrade` converts)',
    ".dump-redo-log": "1 = logdump-like dump of every redo log read, 2 = extended dump",
    ".dump-path": "directory of the dump files (read only when dump-redo-log > 0)",
    ".dump-raw-data": "1 = add raw bytes to the dump",
    ".log-level": "0 silent, 1 error, 2 warning, 3 info, 4 debug",
    ".trace": "trace bitmask: 1 DML, 2 DUMP, 4 LOB, 8 LWN, 0x10 THREADS, ... 0x80000 STREAM",
    ".memory": "memory pool sizes (section below)",
    ".metrics": "Prometheus endpoint (section below); absent = no metrics",
    ".state": "where checkpoint files live (section below)",
    ".source": "exactly one source database",
    ".target": "exactly one target",
    # memory
    "memory.min-mb": "memory preallocated and kept, MB",
    "memory.max-mb": "upper bound of the memory pool, MB; sets the defaults of the read/write buffers and swap",
    "memory.unswap-buffer-min-mb": "memory reserved for reading swapped transactions back, MB",
    "memory.swap-mb": "pool use at which transaction chunks are swapped to disk (default max-mb*3/4); 0 = never",
    "memory.read-buffer-min-mb": "redo read buffers, minimum MB",
    "memory.read-buffer-max-mb": "redo read buffers, maximum MB (default min(max-mb/8, 128))",
    "memory.write-buffer-min-mb": "output buffer, minimum MB",
    "memory.write-buffer-max-mb": "OpenLogReplicator's output buffer limit; accepted and range-checked, "
    "not used here (each writer bounds its own queue: `queue-size`, Kafka "
    "`max-message-mb`)",
    "memory.swap-path": "directory of the swap files (read only when swap-mb > 0)",
    # metrics
    "metrics.type": '"prometheus"; without it the section is ignored',
    "metrics.bind": "host:port serving /metrics (mandatory with type)",
    "metrics.tag-names": "add owner/table labels to dml_ops: none, filter (user tables), sys, all",
    # state
    "state.type": '"disk"',
    "state.path": "checkpoint directory; [quirk] read only when type is given too; must exist",
    "state.interval-s": "seconds of redo time between schema checkpoints",
    "state.interval-mb": "MB of redo parsed between schema checkpoints",
    "state.keep-checkpoints": "how many of the newest schema checkpoint files to keep; the one a restart "
    "needs and the start checkpoint are kept too (docs/operations.md §3)",
    "state.schema-force-interval": "reference-only checkpoints in a row before a full schema is written again",
    # source
    "source[0].alias": "name the target refers to",
    "source[0].name": "logical database name: checkpoint file names and the database field",
    "source[0].reader": "where redo comes from (section below)",
    "source[0].flags": "bitmask: 0x1 archived only, 0x2 schemaless, 0x20 DDL, 0x1000 checkpoint messages, ...",
    "source[0].debug": "stop conditions for tests (section below)",
    "source[0].transaction-max-mb": "split transactions bigger than this (debugging); 0 = never",
    "source[0].format": "output format (section below)",
    "source[0].redo-read-sleep-us": "sleep when the online redo is fully read",
    "source[0].arch-read-sleep-us": "sleep before retrying an archived log",
    "source[0].arch-read-tries": "attempts to open an archived log before error 10009",
    "source[0].redo-verify-delay-us": "re-read delay to verify online redo blocks (500000 with flag 0x8)",
    "source[0].refresh-interval-us": "how often the online log group list is re-read",
    "source[0].arch": "online reader: archived log discovery (online, online-keep, path)",
    "source[0].filter": "tables to replicate and transactions to skip (section below)",
    # reader
    "source[0].reader.type": "online (database connection), offline (checkpoint + files) or batch (file list)",
    "source[0].reader.user": "database user (online)",
    "source[0].reader.password": "database password (online)",
    "source[0].reader.server": "//host:port/service (online)",
    "source[0].reader.disable-checks": "1 grants, 2 supplemental logging, 4 block checksums, 8 JSON key names",
    "source[0].reader.start-scn": "first SCN to replicate; batch/offline: also selects the schema checkpoint",
    "source[0].reader.start-seq": "first redo sequence",
    "source[0].reader.start-time-rel": "online: start this many seconds ago",
    "source[0].reader.start-time": "online: start at YYYY-MM-DD HH24:MI:SS",
    "source[0].reader.redo-copy-path": "directory receiving a copy of each redo log read",
    "source[0].reader.db-timezone": "database time zone (default: from the checkpoint)",
    "source[0].reader.host-timezone": "time zone of the database host; converts redo times to epoch",
    "source[0].reader.log-timezone": "time zone of the log line timestamps",
    "source[0].reader.redo-log": "batch: redo files or directories to process, in sequence order",
    "source[0].reader.path-mapping": "pairs of path prefixes [from, to, ...] applied to database-reported paths",
    "source[0].reader.log-archive-format": "archived log name pattern (%t thread, %s sequence, %r resetlogs, %h hash)",
    "source[0].reader.redo-source": "where redo files are read: local (default), sftp or asm (section below)",
    # reader.redo-source (this replicator's extension; docs/operations.md "Redo sources")
    "source[0].reader.redo-source.type": "local (this machine), sftp (database host over SSH) or asm (disk group via DBMS_DISKGROUP)",
    "source[0].reader.redo-source.host": "sftp: SSH server host name or address",
    "source[0].reader.redo-source.port": "sftp: SSH server port",
    "source[0].reader.redo-source.user": "sftp: SSH login; asm: database user of the ASM session",
    "source[0].reader.redo-source.key-file": "sftp: private key file (OpenSSH format); password logins are not offered",
    "source[0].reader.redo-source.key-passphrase": "sftp: passphrase of an encrypted key (never logged)",
    "source[0].reader.redo-source.known-hosts": "sftp: known_hosts file the server's host key must be listed in",
    "source[0].reader.redo-source.accept-unknown-host-key": "sftp: 1 accepts a host key not in known-hosts (warning 60212); 0 refuses it (10211)",
    "source[0].reader.redo-source.read-requests": "sftp: read-ahead pieces in flight while a file is read "
    "(per connection)",
    "source[0].reader.redo-source.read-size-kb": "sftp: size of one read-ahead piece",
    "source[0].reader.redo-source.connect-timeout-ms": "sftp: time allowed to connect and log in (a dead "
    "connection is found by keepalives within about 15 s)",
    "source[0].reader.redo-source.reconnect-tries": "sftp: reconnections tried after a dropped connection before 10210",
    "source[0].reader.redo-source.reconnect-delay-ms": "sftp: first wait before reconnecting; doubled after each failed try",
    "source[0].reader.redo-source.reconnect-max-delay-ms": "sftp: longest wait between two reconnection tries",
    "source[0].reader.redo-source.connections": "sftp: SSH connections reading an archived log in parallel, "
    "each in its own reader process; 0 reads in the replicator's process. "
    "Default: the cores the replicator may use minus one, 1 to 2",
    "source[0].reader.redo-source.window-kb": "sftp: SSH channel window: data the server may send ahead of this "
    "side; at least bandwidth x round-trip time (4 MB: 200 MB/s at 20 ms "
    "per connection); larger costs the server CPU when the reader lags",
    "source[0].reader.redo-source.server": "asm: connect string of the ASM (or database) instance, //host:port/service",
    "source[0].reader.redo-source.password": "asm: password of `user` (never logged)",
    "source[0].reader.redo-source.privilege": "asm: session privilege: sysasm, sysdba or none",
    "source[0].reader.redo-source.parallelism": "asm: sessions reading 32 KB pieces in parallel",
    "source[0].reader.redo-source.path-mapping": "pairs of prefixes [database path, source path, ...] applied to every path read",
    # format
    "source[0].format.type": "json, debezium (json with a preset) or protobuf",
    "source[0].format.db": "1 add db to begin/DML/commit, 2 to DDL",
    "source[0].format.attributes": "add session attributes: 1 begin, 2 DML, 4 commit",
    "source[0].format.interval-dts": "INTERVAL DAY TO SECOND rendering",
    "source[0].format.interval-ytm": "INTERVAL YEAR TO MONTH rendering",
    "source[0].format.message": "1 one message per transaction, 2 add num, 4 skip begin, 8 skip commit, 0x10 offset",
    "source[0].format.rid": "1 add the row id",
    "source[0].format.redo-thread": "1 add the redo thread (rth)",
    "source[0].format.xid": "0 hex, 1 decimal, 2 xidn number, 3 LogMiner byte order",
    "source[0].format.timestamp": "DATE/TIMESTAMP column rendering",
    "source[0].format.timestamp-metadata": "message header tm/tms rendering",
    "source[0].format.timestamp-tz": "TIMESTAMP WITH TIME ZONE rendering",
    "source[0].format.timestamp-type": "1 commit time, 2 add b_tm, 4 tm in every message, 8 add e_tm",
    "source[0].format.user-type": "add the login user name: 1 begin, 2 DML, 4 commit, 8 DDL",
    "source[0].format.char": "0 UTF-8, 1 raw bytes, 2 hex of UTF-8, 3 hex of raw bytes",
    "source[0].format.scn": '0 "scn":<decimal>, 1 "scns":"0x<hex>"',
    "source[0].format.scn-type": "1 commit SCN everywhere, 2 add b_scn, 4 scn in every message, 8 add e_scn",
    "source[0].format.unknown": "1 log undecodable values (WARN 60002)",
    "source[0].format.schema": "1 column list on first use, 2 on every message, 4 add obj",
    "source[0].format.column": "0 changed columns, 1 full insert/delete, 2 everything in redo",
    "source[0].format.unknown-type": '0 leave out columns of unsupported types, 1 print "?"',
    "source[0].format.flush-buffer": "wake the writer after this many unflushed bytes; 0 = every message",
    "source[0].format.avro-schema-path": "extension: directory where the avro format writes its schema files",
    "source[0].format.binary-handling-mode": "extension: debezium-* formats' RAW/BLOB values, as Debezium's binary.handling.mode: bytes (base64 under a bytes schema), base64, base64-url-safe or hex (string schema)",
    "source[0].format.tombstones-on-delete": "extension: 1 (default) writes a tombstone (key, null value) after each DELETE in debezium-envelope/-flatten, as Debezium's tombstones.on.delete",
    "source[0].format.checkpoint-digests": "extension: 1 adds to every checkpoint message the count and digest of the changes since the previous one, per table (json/debezium with flags 0x1000; `replicator client --verify` checks them; docs/formats.md §10)",
    # filter
    "source[0].filter.separator": "splits the key and tag lists",
    "source[0].filter.table": "table rules, evaluated in order (section below)",
    "source[0].filter.skip-xid": "transactions dropped entirely (XID strings)",
    "source[0].containers": "extension: more PDBs of the CDB replicated in the same pass over the redo, one element per PDB (batch and offline readers; docs/multitenant.md)",
    "source[0].containers[].state-path": "the folder with that PDB's schema checkpoints (read as state.path's, by reader.start-scn; the run writes that PDB's there)",
    "source[0].filter.dump-xid": "transactions dumped to stderr (diagnostics)",
    "source[0].filter.table[].owner": "owner regex, full match, case-sensitive",
    "source[0].filter.table[].table": "table regex, full match, case-sensitive",
    "source[0].filter.table[].key": "columns replacing the primary key",
    "source[0].filter.table[].condition": "row filter, e.g. [op] != 'd' (no operator precedence)",
    "source[0].filter.table[].tag": "[pk], [all] or columns rendered as the Kafka key",
    # debug
    "source[0].debug.stop-log-switches": "stop softly after this many redo logs were read to their end "
    "(nothing of the next one is parsed); 0 = never",
    "source[0].debug.stop-checkpoints": "stop softly after this many checkpoints; 0 = never",
    "source[0].debug.stop-transactions": "stop softly at the end of the LWN that commits this many transactions "
    "not confirmed before; 0 = never",
    "source[0].debug.owner": "with table: a committed DML on this table stops the process",
    "source[0].debug.table": "with owner: a committed DML on this table stops the process",
    # target and writers
    "target[0].alias": "target name",
    "target[0].source": "must equal source[0].alias",
    "target[0].writer": "where messages go (sections below)",
    "writer.type": "file, kafka, network, zeromq or discard",
    "writer.poll-interval-us": "writer wake-up interval",
    "writer.queue-size": "maximum messages sent but not yet confirmed",
    "writer.output": "file name; %i/%Ni/%t rotate, %s one file per sequence; absent = stdout; files are created "
    "with mode 0600, as in OpenLogReplicator (docs/operations.md, batch runs)",
    "writer.max-file-size": "rotate at this size (bytes); 0 = never",
    "writer.timestamp-format": "strftime format for %t",
    "writer.new-line": "0 none, 1 LF, 2 CRLF after each message",
    "writer.append": "1: continue the existing file (with %i: the highest number). 0: with %i a new number at "
    "each start; with %t or %s an existing file is error 10003; a name without placeholder "
    "needs 1 (30006). As in OpenLogReplicator",
    "writer.write-buffer-flush-size": "flush the file buffer after this many bytes",
    "writer.max-message-mb": "largest Kafka message, MB",
    "writer.topic": "Kafka topic",
    "writer.properties": "librdkafka properties (message.max.bytes is set from max-message-mb)",
    "writer.uri": "host:port to listen on (network); tcp://HOST:PORT or ipc://PATH (zeromq: HOST and PORT may be *)",
    "writer.auth-token": "network, zeromq: clients must present this shared secret (network: first frame; zeromq: "
    "ZMTP PLAIN password; replicator client --token); null or absent: no authentication; "
    "extension",
    "writer.tls-cert": "network: serve TLS with this PEM certificate chain (replicator client --tls-ca); extension",
    "writer.tls-key": "network: the PEM private key of tls-cert (if not in that file); extension",
    "writer.topic-per-table": "extension: topic per table, e.g. cdc.{owner}.{table}; other messages stay on topic",
    "writer.key-by-pk": "extension: 1 keys row messages by primary key when the table has no tag",
}
