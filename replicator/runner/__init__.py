"""Running a configuration: the batch and daemon runners, their shared assembly, pipeline, engine and checkpoints."""
