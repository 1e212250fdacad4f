"""Crawling other domains' ARD manifests: finding, reading, walking them, and applying them to the catalog."""
