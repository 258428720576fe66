"""What the engine keeps on this machine: its private state folder, the backups taken
before teardown, and the lock that lets one operation change a network at a time."""
