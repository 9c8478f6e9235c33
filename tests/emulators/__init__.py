"""Loopback emulators of hosted APIs (Upstash Vector, ...), driven through the vendors' SDKs."""
