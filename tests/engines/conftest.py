"""One Ray cluster for every test of this package: a CPU-less head and three one-CPU nodes
(``ray.cluster_utils.Cluster``), started once (it takes 20-30 s here) and stopped after
the package. Its head notices a lost node in about two seconds (Ray's default is about
thirty), for the node-loss test. A module that wants Ray initialised in the test process
takes ``ray_cluster``; a test whose runs join the cluster themselves passes
``--ray-address`` with ``nodes.address``."""

from __future__ import annotations

import pytest

#: the head's health checks: a lost node is known after three missed half-second checks
FAST_HEALTH_CHECKS = {
    "health_check_period_ms": 500,
    "health_check_failure_threshold": 3,
    "health_check_timeout_ms": 1000,
    "health_check_initial_delay_ms": 0,
}
WORKER_NODES = 3


@pytest.fixture(scope="package")
def nodes():  # type: ignore[no-untyped-def]
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    assert not ray.is_initialized()
    head = {"num_cpus": 0, "include_dashboard": False, "_system_config": FAST_HEALTH_CHECKS}
    c = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(WORKER_NODES):
        c.add_node(num_cpus=1)
    yield c
    c.shutdown()


@pytest.fixture
def whole(nodes):  # type: ignore[no-untyped-def]
    """The shared cluster, given back with its three worker nodes (a test may remove some)."""
    yield nodes
    while len(nodes.worker_nodes) < WORKER_NODES:
        nodes.add_node(num_cpus=1)
    nodes.wait_for_nodes()


@pytest.fixture(scope="module")
def ray_cluster(nodes):  # type: ignore[no-untyped-def]
    """Ray initialised in this process on the shared cluster, for a module."""
    import ray

    ray.init(address=nodes.address, log_to_driver=False)
    yield ray
    ray.shutdown()
