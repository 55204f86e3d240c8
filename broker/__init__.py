"""A real single-node Kafka (KRaft) broker that offsetlake starts itself, from Maven jars."""

from broker.embedded import BrokerError, EmbeddedBroker

__all__ = ["BrokerError", "EmbeddedBroker"]
