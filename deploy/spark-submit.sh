#!/bin/sh
# Start the PySpark consumer job (Kafka -> sink). The job itself is `replicator spark`;
# this wrapper only fixes the Python used by the Spark driver and workers.
# Usage: replicator-spark [ARGS...]   (arguments are passed to `replicator spark`)
set -eu
PYTHON="${PYSPARK_PYTHON:-$(command -v python3)}"
export PYSPARK_PYTHON="$PYTHON"
export PYSPARK_DRIVER_PYTHON="${PYSPARK_DRIVER_PYTHON:-$PYTHON}"
exec replicator spark "$@"
