"""Operating the daemon: Prometheus metrics, systemd notification, progress lines."""
