import json

import pytest

from electra_tf.errors import ConfigError
from electra_tf.training import distribution


def test_tf_config_from_worker_hosts_makes_worker_0_the_chief(monkeypatch):
    config = distribution.tf_config_for_workers("10.0.0.1:2222, 10.0.0.2:2222", 1)
    assert config == {"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}, "task": {"type": "worker", "index": 1}}
    monkeypatch.delenv("TF_CONFIG", raising=False)
    distribution.configure_cluster("a:1,b:2", 0)
    assert json.loads(__import__("os").environ["TF_CONFIG"])["task"]["index"] == 0
    assert distribution.is_chief()
    distribution.configure_cluster("a:1,b:2", 0)  # the same cluster again: fine
    with pytest.raises(ConfigError, match="contradict the TF_CONFIG"):
        distribution.configure_cluster("a:1,b:2", 1)
    monkeypatch.setenv("TF_CONFIG", json.dumps(distribution.tf_config_for_workers("a:1,b:2", 1)))
    assert not distribution.is_chief()


@pytest.mark.parametrize("hosts, index, message", [
    ("", 0, "empty"), ("a:1,b", 0, "'b' is not host:port"), ("a:1,a:1", 0, "twice"), ("a:1,b:2", 2, "out of range"),
    ("a:1,b:2", -1, "out of range"),
])
def test_bad_worker_hosts_are_refused(hosts, index, message):
    with pytest.raises(ConfigError, match=message):
        distribution.tf_config_for_workers(hosts, index)
