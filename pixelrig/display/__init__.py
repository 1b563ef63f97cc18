"""What people look at: colourings, the tiled mosaic of a rig, video files, and the window and web-page server that
run in child processes. Imports nothing that imports pybullet, so that its child processes start light."""
