"""The pure core of streamjobs: the manifest, the rules and the errors, with no I/O."""
