"""Operating-system plumbing: starting helper processes, the cache folder, capturing what native code prints.
Imports nothing of pixelrig's that imports pybullet."""
