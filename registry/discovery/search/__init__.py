"""The ARD API's search, explore and listing, and federation with other registries."""
