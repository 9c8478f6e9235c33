"""turbopuffer, read through the official ``turbopuffer`` SDK."""
