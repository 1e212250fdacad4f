"""Publishing the registry's own ARD manifest: its pages, their cache, its signature."""
