#!/bin/sh
# Run the replicator's Spark consumer (Kafka change stream -> lake tables) with spark-submit,
# on a cluster or locally. The job itself is `replicator spark run`; this wrapper picks the
# Python for driver and workers, adds optional connector packages, and passes the rest on.
#
# Usage:
#   deploy/spark-submit.sh [SPARK-SUBMIT OPTIONS...] -- run --lake DIR -f OpenLogReplicator.json [JOB OPTIONS...]
#   deploy/spark-submit.sh run --lake DIR -f OpenLogReplicator.json        (no spark-submit options)
# Without a spark-submit it runs `replicator spark` directly (local master).
#
# Environment:
#   SPARK_SUBMIT    spark-submit to use (default: $SPARK_HOME/bin/spark-submit, else the one on
#                   PATH; `pip install pyspark` ships one)
#   PYSPARK_PYTHON  Python of the driver and the workers; it needs `pip install 'replicator[spark]'`
#                   (default: python3 on PATH)
#   KAFKA_PACKAGE   e.g. org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0 adds Spark's native Kafka
#                   source (the job then uses it instead of its confluent-kafka Python source)
#   DELTA_PACKAGE   e.g. io.delta:delta-spark_2.13:4.0.0 adds Spark's own Delta (also `pip install
#                   delta-spark` in PYSPARK_PYTHON) for readers in the same session; the job's
#                   executors write the data files and the driver commits them with delta-rs either way
set -eu

PYTHON="${PYSPARK_PYTHON:-$(command -v python3)}"
if [ -n "${SPARK_SUBMIT:-}" ]; then
    SUBMIT="$SPARK_SUBMIT"
elif [ -n "${SPARK_HOME:-}" ] && [ -x "$SPARK_HOME/bin/spark-submit" ]; then
    SUBMIT="$SPARK_HOME/bin/spark-submit"
else
    SUBMIT="$(command -v spark-submit || true)"
fi
export PYSPARK_PYTHON="$PYTHON"
export PYSPARK_DRIVER_PYTHON="${PYSPARK_DRIVER_PYTHON:-$PYTHON}"
if [ -z "$SUBMIT" ]; then
    # No spark-submit: the job starts its own local Spark session (spark-submit options are dropped).
    case " $* " in *" -- "*) while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done; shift ;; esac
    exec replicator spark "$@"
fi
DRIVER="$("$PYTHON" -c 'import replicator.spark.cli as m; print(m.__file__)')" || {
    echo "$PYTHON cannot import replicator.spark: pip install 'replicator[spark]' into it" >&2
    exit 2
}

# Options before "--" belong to spark-submit, the rest to the job.
SUBMIT_ARGS=""
case " $* " in
    *" -- "*)
        while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
            SUBMIT_ARGS="$SUBMIT_ARGS $(printf '%s' "$1" | sed "s/'/'\\\\''/g; s/^/'/; s/\$/'/")"
            shift
        done
        shift
        ;;
esac

PACKAGES=""
EXTRA=""
if [ -n "${KAFKA_PACKAGE:-}" ]; then
    PACKAGES="$KAFKA_PACKAGE"
fi
if [ -n "${DELTA_PACKAGE:-}" ]; then
    PACKAGES="${PACKAGES:+$PACKAGES,}$DELTA_PACKAGE"
    EXTRA="--conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension"
    EXTRA="$EXTRA --conf spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog"
fi

# shellcheck disable=SC2086  # EXTRA and the quoted SUBMIT_ARGS are word lists on purpose
eval exec "\"\$SUBMIT\"" \
    --conf spark.sql.session.timeZone=UTC \
    --conf spark.sql.mapKeyDedupPolicy=LAST_WIN \
    ${PACKAGES:+--packages "$PACKAGES"} $EXTRA $SUBMIT_ARGS \
    "\"\$DRIVER\"" '"$@"'
