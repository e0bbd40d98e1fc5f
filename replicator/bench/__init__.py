"""Benchmarks that print figures: redo throughput, huge transactions, tailing lag, writers."""
