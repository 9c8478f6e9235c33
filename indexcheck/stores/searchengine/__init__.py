"""stores/searchengine: what the Elasticsearch and OpenSearch stores share."""
