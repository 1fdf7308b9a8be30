"""The bundle's files: layout, manifest and verification, in one place."""
