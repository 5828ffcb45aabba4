"""Parameters chosen for a goal, returned with the Verdict that they are right.

:mod:`.descriptor`: wgmma descriptors for a layout, layouts for a tile; :mod:`.swizzle`: the
swizzle with the fewest wavefronts; :mod:`.blockload`: Intel 2D block-load plans. Every answer
satisfies the one :class:`verilayout.synth.plan.Plan` protocol (parameters plus ``verdict``).
"""
