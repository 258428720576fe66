"""The emulated ``skupper`` CLI (V2, system platform) of the sandbox hosts."""
