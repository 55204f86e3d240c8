"""Expectations on silver.quarantine: few records are undecodable."""

from __future__ import annotations

from quality.suite import Rule, Scope, Suite, unexpected_rows
from schemas import offsets_topic_records, quarantine

TABLE = quarantine.TABLE.name

QUARANTINE_RATE_BELOW_THRESHOLD = Rule(
    "quarantine_rate_below_threshold", "critical",
    "Quarantined records are __consumer_offsets records the decoders could not read (a record type or "
    "version newer than them): they are missing from silver and gold. Above quality.max_quarantine_rate of "
    "bronze's records the warehouse no longer describes the cluster.",
    unexpected_rows("""
        SELECT q.quarantined, b.records, q.quarantined / b.records AS rate, $max_quarantine_rate AS max_rate
        FROM (SELECT count(*) AS quarantined FROM {batch}) q
        CROSS JOIN (SELECT count(*) AS records FROM bronze_offsets_topic_records) b
        WHERE q.quarantined > b.records * $max_quarantine_rate"""),
    needs=(offsets_topic_records.TABLE.name,),
    scope=Scope.TABLE,
)

SUITE = Suite("quarantine", TABLE, (QUARANTINE_RATE_BELOW_THRESHOLD,))
