"""``--engine ray``: the engine on the driver (:mod:`.engine`), what runs on the workers
(:mod:`.worker`), and what the driver keeps on the cluster or feeds itself (:mod:`.blocks`)."""
