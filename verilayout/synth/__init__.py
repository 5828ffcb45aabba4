"""Parameters chosen for a goal, returned with the Verdict that they are right.

:mod:`.descriptor`: wgmma descriptors for a layout, layouts for a tile.
"""
