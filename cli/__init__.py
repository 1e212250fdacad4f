"""The `agentdex` command line: thin, lazy-importing wrappers over the services and libraries."""
