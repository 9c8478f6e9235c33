"""stores/upstash."""
