"""Reference coordinator: Kafka's classic group coordinator and its consumers, simulated (and KIP-848
consumer groups, minimally: :mod:`coordinator.consumer_group`).

>>> from coordinator import simulate
>>> result = simulate("conf/scenarios/rebalance-storm.yaml")     # doctest: +SKIP
>>> result.write("out/")                                             # doctest: +SKIP

Pure Python (no Spark, no Kafka client); deterministic on a simulated clock. See
:mod:`coordinator.simulation` for the entry point, :mod:`coordinator.scenario` for the scenario
format and :mod:`coordinator.timeline` for the outputs.
"""

from coordinator.scenario import Scenario, ScenarioError, load_scenario
from coordinator.simulation import OffsetsTopicRecord, SimulationResult, simulate

__all__ = ["OffsetsTopicRecord", "Scenario", "ScenarioError", "SimulationResult", "load_scenario", "simulate"]
