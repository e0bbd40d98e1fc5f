# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A librdkafka producer that takes MessageRuns whole (issue 28; its own extension module).

The kafka writer's run path (replicator/writers/kafka_runs.py) produces every message of a
run from the run's own buffer (no copy, no Python object per message). Each produced item
(a run, or one Message) has a serial number and a slot in a ledger of C arrays; the delivery
report callback (plain C, served by rd_kafka_poll on the writer's thread) counts the slot's
reports, so the writer confirms an item once, in order, when all its messages are delivered.

librdkafka is not a build dependency: the few functions used are declared here and resolved
at run time (dlopen/dlsym) from the library the confluent-kafka wheel ships, whose path the
writer passes in. The declarations follow librdkafka's stable C ABI (rdkafka.h).

A run's C arrays are read through ``replicator/native/_core.pxd`` (MessageRun's fields), the
only thing this module takes from the core. It lives beside the kafka writer
(replicator.writers.kafka, kafka_runs), a layer above the core it cimports.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, intptr_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset
from posix.dlfcn cimport dlopen, dlsym, dlerror, RTLD_NOW, RTLD_LOCAL

from replicator.native._core cimport MessageRun


ctypedef struct rk_message_t:  # rd_kafka_message_t
    int err
    void* rkt
    int32_t partition
    void* payload
    size_t len
    void* key
    size_t key_len
    int64_t offset
    void* serial_opaque  # librdkafka's _private (the per-message opaque): here the item's serial


ctypedef void (*rk_dr_cb_t)(void* rk, const rk_message_t* msg, void* opaque) noexcept nogil
ctypedef void (*rk_error_cb_t)(void* rk, int err, const char* reason, void* opaque) noexcept nogil
ctypedef void (*rk_log_cb_t)(const void* rk, int level, const char* fac, const char* buf) noexcept nogil

ctypedef void* (*rk_conf_new_t)() noexcept nogil
ctypedef int (*rk_conf_set_t)(void* conf, const char* name, const char* value, char* errstr, size_t size) noexcept nogil
ctypedef void (*rk_conf_set_dr_t)(void* conf, rk_dr_cb_t cb) noexcept nogil
ctypedef void (*rk_conf_set_error_t)(void* conf, rk_error_cb_t cb) noexcept nogil
ctypedef void (*rk_conf_set_log_t)(void* conf, rk_log_cb_t cb) noexcept nogil
ctypedef void (*rk_conf_set_opaque_t)(void* conf, void* opaque) noexcept nogil
ctypedef void (*rk_ptr_t)(void* p) noexcept nogil
ctypedef void* (*rk_new_t)(int kind, void* conf, char* errstr, size_t size) noexcept nogil
ctypedef int (*rk_set_log_queue_t)(void* rk, void* queue) noexcept nogil
ctypedef void* (*rk_opaque_t)(const void* rk) noexcept nogil
ctypedef const char* (*rk_name_t)(const void* rk) noexcept nogil
ctypedef void* (*rk_topic_new_t)(void* rk, const char* topic, void* conf) noexcept nogil
ctypedef int (*rk_produce_t)(void* rkt, int32_t partition, int flags, void* payload, size_t size,
                             const void* key, size_t keylen, void* opaque) noexcept nogil
ctypedef int (*rk_producev_t)(void* rk, ...) noexcept nogil
ctypedef void* (*rk_headers_new_t)(size_t count) noexcept nogil
ctypedef int (*rk_header_add_t)(void* hdrs, const char* name, Py_ssize_t name_size, const void* value,
                                Py_ssize_t value_size) noexcept nogil
ctypedef int (*rk_int_t)(void* rk, int value) noexcept nogil
ctypedef const char* (*rk_err2str_t)(int err) noexcept nogil
ctypedef int (*rk_last_error_t)() noexcept nogil
ctypedef int (*rk_fatal_error_t)(void* rk, char* errstr, size_t size) noexcept nogil
ctypedef int (*rk_metadata_t)(void* rk, int all_topics, void* only_rkt, const void** md, int timeout_ms) noexcept nogil
ctypedef void (*rk_metadata_destroy_t)(const void* md) noexcept nogil


ctypedef struct RkApi:
    rk_conf_new_t conf_new
    rk_conf_set_t conf_set
    rk_conf_set_dr_t conf_set_dr_msg_cb
    rk_conf_set_error_t conf_set_error_cb
    rk_conf_set_log_t conf_set_log_cb
    rk_conf_set_opaque_t conf_set_opaque
    rk_ptr_t conf_destroy
    rk_new_t new
    rk_set_log_queue_t set_log_queue
    rk_opaque_t opaque
    rk_name_t name
    rk_topic_new_t topic_new
    rk_ptr_t topic_destroy
    rk_produce_t produce
    rk_producev_t producev
    rk_headers_new_t headers_new
    rk_header_add_t header_add
    rk_ptr_t headers_destroy
    rk_int_t poll
    rk_int_t flush
    rk_int_t purge
    rk_ptr_t destroy
    rk_err2str_t err2str
    rk_last_error_t last_error
    rk_fatal_error_t fatal_error
    rk_metadata_t metadata
    rk_metadata_destroy_t metadata_destroy


cdef RkApi rk_api
cdef bytes rk_loaded = None  # the path rk_api was resolved from

# rd_kafka_vtype_t (producev arguments), flags and special values of rdkafka.h
cdef enum:
    RK_V_END = 0
    RK_V_RKT = 2
    RK_V_PARTITION = 3
    RK_V_VALUE = 4
    RK_V_KEY = 5
    RK_V_OPAQUE = 6
    RK_V_MSGFLAGS = 7
    RK_V_HEADERS = 10
    RK_PRODUCER = 0
    RK_PARTITION_UA = -1
    RK_PURGE_ALL_NONBLOCKING = 7  # RD_KAFKA_PURGE_F_QUEUE | _F_INFLIGHT | _F_NON_BLOCKING
    RK_ERR_FATAL = -150
    RK_ERR_QUEUE_FULL = -184


cdef void* _rk_sym(void* lib, const char* name) except NULL:
    cdef void* p = dlsym(lib, name)
    if p == NULL:
        raise OSError(f"librdkafka has no {name.decode()}")
    return p


cdef int rk_load(bytes path) except -1:
    """Resolve rk_api from the librdkafka at ``path`` (once per process)."""
    global rk_loaded
    if rk_loaded is not None:
        if rk_loaded != path:
            raise OSError(f"librdkafka already loaded from {rk_loaded.decode()}")
        return 0
    cdef void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)
    if lib == NULL:
        raise OSError(f"cannot load librdkafka: {(<bytes>dlerror()).decode(errors='replace')}")
    rk_api.conf_new = <rk_conf_new_t>_rk_sym(lib, b"rd_kafka_conf_new")
    rk_api.conf_set = <rk_conf_set_t>_rk_sym(lib, b"rd_kafka_conf_set")
    rk_api.conf_set_dr_msg_cb = <rk_conf_set_dr_t>_rk_sym(lib, b"rd_kafka_conf_set_dr_msg_cb")
    rk_api.conf_set_error_cb = <rk_conf_set_error_t>_rk_sym(lib, b"rd_kafka_conf_set_error_cb")
    rk_api.conf_set_log_cb = <rk_conf_set_log_t>_rk_sym(lib, b"rd_kafka_conf_set_log_cb")
    rk_api.conf_set_opaque = <rk_conf_set_opaque_t>_rk_sym(lib, b"rd_kafka_conf_set_opaque")
    rk_api.conf_destroy = <rk_ptr_t>_rk_sym(lib, b"rd_kafka_conf_destroy")
    rk_api.new = <rk_new_t>_rk_sym(lib, b"rd_kafka_new")
    rk_api.set_log_queue = <rk_set_log_queue_t>_rk_sym(lib, b"rd_kafka_set_log_queue")
    rk_api.opaque = <rk_opaque_t>_rk_sym(lib, b"rd_kafka_opaque")
    rk_api.name = <rk_name_t>_rk_sym(lib, b"rd_kafka_name")
    rk_api.topic_new = <rk_topic_new_t>_rk_sym(lib, b"rd_kafka_topic_new")
    rk_api.topic_destroy = <rk_ptr_t>_rk_sym(lib, b"rd_kafka_topic_destroy")
    rk_api.produce = <rk_produce_t>_rk_sym(lib, b"rd_kafka_produce")
    rk_api.producev = <rk_producev_t>_rk_sym(lib, b"rd_kafka_producev")
    rk_api.headers_new = <rk_headers_new_t>_rk_sym(lib, b"rd_kafka_headers_new")
    rk_api.header_add = <rk_header_add_t>_rk_sym(lib, b"rd_kafka_header_add")
    rk_api.headers_destroy = <rk_ptr_t>_rk_sym(lib, b"rd_kafka_headers_destroy")
    rk_api.poll = <rk_int_t>_rk_sym(lib, b"rd_kafka_poll")
    rk_api.flush = <rk_int_t>_rk_sym(lib, b"rd_kafka_flush")
    rk_api.purge = <rk_int_t>_rk_sym(lib, b"rd_kafka_purge")
    rk_api.destroy = <rk_ptr_t>_rk_sym(lib, b"rd_kafka_destroy")
    rk_api.err2str = <rk_err2str_t>_rk_sym(lib, b"rd_kafka_err2str")
    rk_api.last_error = <rk_last_error_t>_rk_sym(lib, b"rd_kafka_last_error")
    rk_api.fatal_error = <rk_fatal_error_t>_rk_sym(lib, b"rd_kafka_fatal_error")
    rk_api.metadata = <rk_metadata_t>_rk_sym(lib, b"rd_kafka_metadata")
    rk_api.metadata_destroy = <rk_metadata_destroy_t>_rk_sym(lib, b"rd_kafka_metadata_destroy")
    rk_loaded = path
    return 0


def kafka_error_text(int err):
    """librdkafka's text for error code ``err``."""
    if rk_loaded is None:
        return f"error {err}"
    return (<bytes>rk_api.err2str(err)).decode(errors="replace")


ctypedef struct Ledger:
    int64_t* serials    # serial of the item in each slot (slot = serial & mask)
    int64_t* left       # its messages whose delivery report has not come yet
    int* errs           # its first failed report's error (0: none)
    int64_t* fail_at    # ... that message's offset in the item's buffer
    intptr_t* bases     # the item's buffer (to find a failed message)
    int64_t mask
    int64_t head        # oldest serial take_done has not passed yet
    int64_t first_fail  # serial of the first failed report not yet taken (-1: none)
    int64_t delivered   # reports that succeeded
    int64_t failed      # reports that failed
    int64_t stale       # reports naming no open slot (never expected)
    void* owner         # the KafkaRuns (borrowed: it outlives its producer)


cdef void _rk_delivered(void* rk, const rk_message_t* msg, void* opaque) noexcept nogil:
    """Delivery report: count it against its item's slot (plain C: no GIL, no object)."""
    cdef Ledger* led = <Ledger*>opaque
    cdef int64_t serial = <int64_t><intptr_t>msg.serial_opaque
    cdef int64_t slot = serial & led.mask
    if led.serials[slot] != serial or led.left[slot] <= 0:
        led.stale += 1
        return
    led.left[slot] -= 1
    if msg.err == 0:
        led.delivered += 1
        return
    led.failed += 1
    if led.errs[slot] == 0:
        led.errs[slot] = msg.err
        led.fail_at[slot] = <int64_t>(<intptr_t>msg.payload - led.bases[slot])
    if led.first_fail < 0 or serial < led.first_fail:
        led.first_fail = serial


cdef void _rk_error(void* rk, int err, const char* reason, void* opaque) noexcept with gil:
    (<KafkaRuns>(<Ledger*>opaque).owner)._call(0, err, reason, b"")


cdef void _rk_log(const void* rk, int level, const char* fac, const char* buf) noexcept with gil:
    cdef Ledger* led = <Ledger*>rk_api.opaque(rk)
    if led != NULL and led.owner != NULL:
        (<KafkaRuns>led.owner)._call(1, level, fac, buf)


cdef class KafkaRuns:
    """One librdkafka producer and the ledger of the items it was given (see the header).

    ``on_error(code, reason)`` and ``on_log(level, facility, text)`` are called on the
    thread that polls (librdkafka's log lines are forwarded to its main queue); an exception
    they raise is raised again out of :meth:`poll`.
    """

    cdef void* rk
    cdef Ledger led
    cdef void** rkts
    cdef Py_ssize_t nrkts
    cdef dict topics
    cdef object on_error
    cdef object on_log
    cdef object cb_error
    cdef readonly int last_err  # why the last produce_run stopped early (0: it did not)

    def __cinit__(self):
        self.rk = NULL
        self.rkts = NULL
        self.nrkts = 0
        memset(&self.led, 0, sizeof(Ledger))

    def __init__(self, str library, list conf, Py_ssize_t capacity, on_error, on_log):
        """``conf``: (name, value) pairs; ``capacity``: produced items unconfirmed at most."""
        cdef char errstr[512]
        cdef int64_t cap = 16
        cdef void* c
        rk_load(library.encode())
        while cap < capacity + 2:
            cap <<= 1
        self.led.serials = <int64_t*>malloc(cap * sizeof(int64_t))
        self.led.left = <int64_t*>calloc(cap, sizeof(int64_t))
        self.led.errs = <int*>calloc(cap, sizeof(int))
        self.led.fail_at = <int64_t*>calloc(cap, sizeof(int64_t))
        self.led.bases = <intptr_t*>calloc(cap, sizeof(intptr_t))
        if not (self.led.serials and self.led.left and self.led.errs and self.led.fail_at and self.led.bases):
            raise MemoryError()
        memset(self.led.serials, 0xff, cap * sizeof(int64_t))  # -1: no item
        self.led.mask = cap - 1
        self.led.first_fail = -1
        self.led.owner = <void*>self
        self.topics = {}
        self.on_error, self.on_log = on_error, on_log
        c = rk_api.conf_new()
        for name, value in conf:
            if rk_api.conf_set(c, str(name).encode(), str(value).encode(), errstr, sizeof(errstr)) != 0:
                rk_api.conf_destroy(c)
                raise ValueError((<bytes>errstr).decode(errors="replace"))
        rk_api.conf_set_dr_msg_cb(c, _rk_delivered)
        rk_api.conf_set_error_cb(c, _rk_error)
        rk_api.conf_set_log_cb(c, _rk_log)
        rk_api.conf_set_opaque(c, &self.led)
        self.rk = rk_api.new(RK_PRODUCER, c, errstr, sizeof(errstr))
        if self.rk == NULL:
            rk_api.conf_destroy(c)
            raise ValueError((<bytes>errstr).decode(errors="replace"))
        rk_api.set_log_queue(self.rk, NULL)  # log lines reach on_log from poll, on its thread

    cdef void _call(self, int kind, int code, const char* a, const char* b) noexcept:
        """A callback out of librdkafka (GIL held): hand it to python, keep its exception."""
        try:
            if kind == 0:
                self.on_error(code, (<bytes>a).decode(errors="replace"))
            else:
                self.on_log(code, (<bytes>a).decode(errors="replace"), (<bytes>b).decode(errors="replace"))
        except BaseException as exc:
            if self.cb_error is None:
                self.cb_error = exc

    def _live(self):
        if self.rk == NULL:
            raise ValueError("the Kafka producer is closed")

    @property
    def head(self):
        """The oldest serial not confirmed yet (every item before it is delivered)."""
        return self.led.head

    @property
    def delivered(self):
        """Delivery reports that succeeded."""
        return self.led.delivered

    def start_at(self, int64_t serial):
        """The first serial this producer will be given (its ledger starts there)."""
        self.led.head = serial

    def topic(self, str name):
        """The handle (an index) of topic ``name``, made on first use."""
        index = self.topics.get(name)
        if index is not None:
            return index
        self._live()
        cdef void* rkt = rk_api.topic_new(self.rk, name.encode(), NULL)
        if rkt == NULL:
            raise ValueError(kafka_error_text(rk_api.last_error()))
        cdef void** grown = <void**>realloc(self.rkts, (self.nrkts + 1) * sizeof(void*))
        if grown == NULL:
            rk_api.topic_destroy(rkt)
            raise MemoryError()
        self.rkts = grown
        self.rkts[self.nrkts] = rkt
        self.topics[name] = self.nrkts
        self.nrkts += 1
        return self.nrkts - 1

    cdef int _open(self, int64_t serial, int64_t count, const char* base) except -1:
        cdef int64_t slot = serial & self.led.mask
        if serial < self.led.head or serial - self.led.head > self.led.mask:
            raise ValueError(f"Kafka item {serial} outside the ledger ({self.led.head}, {self.led.mask + 1} slots)")
        if self.led.serials[slot] != serial:  # a run produced in parts is opened once
            self.led.serials[slot] = serial
            self.led.left[slot] = count
            self.led.errs[slot] = 0
            self.led.fail_at[slot] = 0
            self.led.bases[slot] = <intptr_t>base
        return 0

    def settled(self, int64_t serial):
        """Record ``serial`` as an item with nothing left to deliver (a rebuilt producer's
        item that the old one delivered whole)."""
        self._open(serial, 0, NULL)

    def produce_run(self, MessageRun run, int64_t serial, Py_ssize_t start, int topic, list slot_topics):
        """Produce ``run``'s messages from ``start`` on as item ``serial`` (to topic handle
        ``topic``, or per table slot the handle in ``slot_topics``); returns where it stopped:
        ``len(run)``, or earlier with :attr:`last_err` set (librdkafka's queue full, ...)."""
        self._live()
        cdef Py_ssize_t n = run.n, i = start, nslots = 0, s
        cdef const char* base = PyBytes_AS_STRING(run.data)
        cdef int64_t* ends = run.ends
        cdef int* tabs = run.tabs
        cdef void* dflt = self.rkts[topic]
        cdef void* rkt
        cdef void** per = NULL
        cdef void* opaque = <void*><intptr_t>serial
        cdef int t, err = 0
        cdef rk_produce_t produce = rk_api.produce
        self._open(serial, n, base)
        if slot_topics is not None:
            nslots = len(slot_topics)
            per = <void**>malloc((nslots + 1) * sizeof(void*))
            if per == NULL:
                raise MemoryError()
            for t in range(nslots):
                per[t] = self.rkts[<Py_ssize_t>slot_topics[t]]
        with nogil:
            while i < n:
                s = 0 if i == 0 else ends[i - 1] + 1
                t = tabs[i]
                rkt = per[t] if per != NULL and 0 <= t < nslots else dflt
                if produce(rkt, RK_PARTITION_UA, 0, <void*>(base + s), <size_t>(ends[i] - s), NULL, 0, opaque) != 0:
                    err = rk_api.last_error()
                    break
                i += 1
        free(per)
        self.last_err = err
        return i

    def produce_message(self, int64_t serial, int topic, object value, object key, object headers):
        """Produce one message as item ``serial``; 0, or librdkafka's error code. ``value``
        (bytes or None: a tombstone) must live until the item is delivered."""
        self._live()
        cdef const char* vp = NULL
        cdef const char* kp = NULL
        cdef size_t vn = 0, kn = 0
        cdef void* hdrs = NULL
        cdef void* rkt = self.rkts[topic]
        cdef void* opaque = <void*><intptr_t>serial
        cdef int err
        cdef bytes name
        if value is not None:
            vp, vn = PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)
        if key is not None:
            kp, kn = PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)
        if headers:
            hdrs = rk_api.headers_new(len(headers))
            for hname, hvalue in headers:
                name = str(hname).encode()
                if hvalue is None:
                    rk_api.header_add(hdrs, name, len(name), NULL, 0)
                else:
                    rk_api.header_add(hdrs, name, len(name), PyBytes_AS_STRING(hvalue), PyBytes_GET_SIZE(hvalue))
        self._open(serial, 1, vp)
        if hdrs != NULL:
            err = rk_api.producev(self.rk, <int>RK_V_RKT, rkt, <int>RK_V_PARTITION, <int32_t>RK_PARTITION_UA,
                                  <int>RK_V_MSGFLAGS, <int>0, <int>RK_V_VALUE, <void*>vp, vn,
                                  <int>RK_V_KEY, <void*>kp, kn, <int>RK_V_OPAQUE, opaque,
                                  <int>RK_V_HEADERS, hdrs, <int>RK_V_END)
            if err != 0:
                rk_api.headers_destroy(hdrs)  # librdkafka owns them only once the message is taken
        else:
            err = rk_api.producev(self.rk, <int>RK_V_RKT, rkt, <int>RK_V_PARTITION, <int32_t>RK_PARTITION_UA,
                                  <int>RK_V_MSGFLAGS, <int>0, <int>RK_V_VALUE, <void*>vp, vn,
                                  <int>RK_V_KEY, <void*>kp, kn, <int>RK_V_OPAQUE, opaque, <int>RK_V_END)
        if err != 0:  # not taken: the slot waits for no report
            self.led.serials[serial & self.led.mask] = -1
        return err

    def poll(self, double timeout):
        """Serve delivery reports and callbacks for up to ``timeout`` seconds."""
        self._live()
        cdef int ms = <int>(timeout * 1000)
        with nogil:
            rk_api.poll(self.rk, ms)
        error, self.cb_error = self.cb_error, None
        if error is not None:
            raise error

    def take_done(self):
        """Move :attr:`head` past the items delivered whole, in order; returns the new head."""
        cdef Ledger* led = &self.led
        cdef int64_t slot
        while True:
            slot = led.head & led.mask
            if led.serials[slot] != led.head or led.left[slot] != 0 or led.errs[slot] != 0:
                return led.head
            led.head += 1

    def done(self, int64_t serial):
        """Whether item ``serial`` was delivered whole."""
        cdef int64_t slot = serial & self.led.mask
        return self.led.serials[slot] == serial and self.led.left[slot] == 0 and self.led.errs[slot] == 0

    def failure(self):
        """(serial, error code, offset of the message in its item's buffer) of the earliest
        failed delivery report not taken yet, or None; taken by this call."""
        cdef int64_t serial = self.led.first_fail
        if serial < 0:
            return None
        self.led.first_fail = -1
        cdef int64_t slot = serial & self.led.mask
        return serial, self.led.errs[slot], self.led.fail_at[slot]

    def fatal_error(self):
        """librdkafka's fatal error (code, text), or None."""
        cdef char errstr[512]
        self._live()
        cdef int err = rk_api.fatal_error(self.rk, errstr, sizeof(errstr))
        return None if err == 0 else (err, (<bytes>errstr).decode(errors="replace"))

    def purge(self):
        """Drop what is queued or in flight (its reports fail with a purge error)."""
        self._live()
        rk_api.purge(self.rk, RK_PURGE_ALL_NONBLOCKING)

    def flush(self, double timeout):
        """Wait up to ``timeout`` seconds for what is queued (serving reports)."""
        self._live()
        cdef int ms = <int>(timeout * 1000)
        with nogil:
            rk_api.flush(self.rk, ms)

    def metadata(self, double timeout):
        """0 once a broker answered a metadata request within ``timeout``, else the error code."""
        self._live()
        cdef const void* md = NULL
        cdef int ms = <int>(timeout * 1000), err
        with nogil:
            err = rk_api.metadata(self.rk, 0, NULL, &md, ms)
        if err == 0 and md != NULL:
            rk_api.metadata_destroy(md)
        return err

    def close(self):
        """Destroy the producer (what it still holds is dropped: :meth:`flush` first)."""
        cdef Py_ssize_t i
        cdef void* rk = self.rk
        if rk == NULL:
            return
        for i in range(self.nrkts):
            rk_api.topic_destroy(self.rkts[i])
        self.nrkts = 0
        self.topics = {}
        self.rk = NULL
        with nogil:
            rk_api.destroy(rk)
        error, self.cb_error = self.cb_error, None

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.rk != NULL:
            for i in range(self.nrkts):
                rk_api.topic_destroy(self.rkts[i])
            with nogil:
                rk_api.destroy(self.rk)
            self.rk = NULL
        free(self.rkts)
        free(self.led.serials)
        free(self.led.left)
        free(self.led.errs)
        free(self.led.fail_at)
        free(self.led.bases)


def run_tables(MessageRun run):
    """The tables ``run``'s table slots name (a message's slot indexes this list)."""
    return run.tables


def run_message_at(MessageRun run, int64_t offset):
    """The index of ``run``'s message whose body starts at ``offset`` in ``run.data``."""
    cdef Py_ssize_t lo = 0, hi = run.n
    while lo < hi:  # the first message ending at or after offset
        mid = (lo + hi) // 2
        if run.ends[mid] < offset:
            lo = mid + 1
        else:
            hi = mid
    return lo
