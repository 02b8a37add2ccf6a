"""The rule registry: :data:`RULES` (rule id → :class:`Rule`, in report order), the extra ids a
rule may emit, and :func:`run_rules` (one finding per root cause, sorted)."""

from __future__ import annotations

from aifabric.audit.rules.buffers import (
    rule_buffer_pool_oversubscribed,
    rule_cable_length_missing,
    rule_headroom_too_small,
    rule_lossless_pg_runtime,
    rule_pg_lookup_missing,
    rule_pg_profile_stale,
    rule_pg_profile_table_mismatch,
)
from aifabric.audit.rules.ecn import (
    rule_ecn_above_pfc_threshold,
    rule_ecn_disabled,
    rule_ecn_kmin_ge_kmax,
    rule_wred_probability_range,
)
from aifabric.audit.rules.model import SEVERITIES, Fabric, Finding, Rule
from aifabric.audit.rules.mtu import rule_mtu_mismatch
from aifabric.audit.rules.pfc import (
    rule_pfc_off_on_headroom_pg,
    rule_pfc_priority_link_mismatch,
    rule_pfc_priority_mismatch,
    rule_pfc_priority_port_mismatch,
)
from aifabric.audit.rules.pfcwd import rule_pfcwd_disabled, rule_pfcwd_invalid
from aifabric.audit.rules.qos_maps import (
    rule_cnp_not_strict,
    rule_dscp_lossless_some_ports,
    rule_lossless_dscp_lossy_at_peer,
    rule_qos_map_inconsistent,
    rule_roce_dscp_lossy,
    rule_tc_pg_mismatch,
)
from aifabric.audit.rules.skipped import rule_checks_skipped
from aifabric.audit.rules.thresholds import rule_pfc_threshold_mismatch

RULES: dict[str, Rule] = {
    r.id: r
    for r in [
        Rule(
            "pfc-priority-mismatch",
            "error",
            "pfc_enable differs between switches of one role",
            rule_pfc_priority_mismatch,
        ),
        Rule(
            "pfc-priority-link-mismatch",
            "error",
            "pfc_enable differs between the two ends of a link",
            rule_pfc_priority_link_mismatch,
        ),
        Rule(
            "qos-map-inconsistent",
            "error",
            "a DSCP/TC/PG/queue map of one name differs between switches of one role "
            "(warning when no lossless class is involved)",
            rule_qos_map_inconsistent,
        ),
        Rule(
            "roce-dscp-lossy",
            "error",
            "the NICs' RoCE DSCP lands in a lossy class (checked only when the NIC side is "
            "stated: --nic-dscp or host configs)",
            rule_roce_dscp_lossy,
        ),
        Rule(
            "pfc-priority-port-mismatch",
            "error",
            "within a switch, a port's pfc_enable differs from the other ports with the same DSCP map",
            rule_pfc_priority_port_mismatch,
        ),
        Rule(
            "pfc-off-on-headroom-pg",
            "error",
            "a PG has a lossless (xoff) buffer profile but its priority is not in the port's pfc_enable",
            rule_pfc_off_on_headroom_pg,
        ),
        Rule(
            "dscp-lossless-some-ports",
            "error",
            "within a switch, a port's DSCP map sends a DSCP that is lossless elsewhere to a lossy TC",
            rule_dscp_lossless_some_ports,
        ),
        Rule(
            "lossless-dscp-lossy-at-peer",
            "error",
            "a DSCP lossless at one end of a link is lossy at the other",
            rule_lossless_dscp_lossy_at_peer,
        ),
        Rule(
            "tc-pg-mismatch",
            "error",
            "a lossless TC maps to a PG without lossless headroom",
            rule_tc_pg_mismatch,
        ),
        Rule(
            "cnp-not-strict",
            "warning",
            "the NICs' CNP DSCP (--cnp-dscp or mlxconfig CNP_DSCP_P1) is not in a strict-priority queue",
            rule_cnp_not_strict,
        ),
        Rule(
            "pfc-threshold-mismatch",
            "error",
            "xon/xoff/size/dynamic_th differ between switches of one role for the "
            "same speed and cable (warning across different hwsku)",
            rule_pfc_threshold_mismatch,
        ),
        Rule(
            "headroom-too-small",
            "error",
            "xoff below the physical minimum, the SONiC formula (Spectrum-4/5; "
            "warning on Spectrum-2/3/6) or the SKU table row",
            rule_headroom_too_small,
        ),
        Rule(
            "pg-profile-stale",
            "error",
            "a lossless PG uses the profile of another speed or cable length (not recreated after a change)",
            rule_pg_profile_stale,
        ),
        Rule(
            "pg-lookup-missing",
            "error",
            "the port's speed/cable pair is missing from pg_profile_lookup.ini",
            rule_pg_lookup_missing,
        ),
        Rule(
            "cable-length-missing",
            "error",
            "a lossless port has no CABLE_LENGTH (or 0m)",
            rule_cable_length_missing,
        ),
        Rule(
            "pg-profile-table-mismatch",
            "warning",
            "a pg_lossless profile differs from its lookup-table row",
            rule_pg_profile_table_mismatch,
        ),
        Rule(
            "lossless-pg-runtime",
            "info",
            "lossless PGs are not in the config (buffermgrd creates them)",
            rule_lossless_pg_runtime,
        ),
        Rule(
            "ecn-disabled",
            "error",
            "a lossless queue has no ECN marking (error under --intent dcqcn or when the role's "
            "majority marks ECN; warning otherwise; info under --intent pfc-only)",
            rule_ecn_disabled,
        ),
        Rule("ecn-kmin-ge-kmax", "error", "WRED Kmin > Kmax (warning when equal)", rule_ecn_kmin_ge_kmax),
        Rule(
            "ecn-above-pfc-threshold",
            "error",
            "ECN Kmin above the PFC XOFF point: PFC fires before ECN (warning for Kmax)",
            rule_ecn_above_pfc_threshold,
        ),
        Rule(
            "wred-probability-range",
            "error",
            "WRED drop probability outside 0..100",
            rule_wred_probability_range,
        ),
        Rule(
            "pfcwd-disabled",
            "error",
            "PFC watchdog off on lossless ports (pfcwd-partial / pfcwd-not-configured: warnings)",
            rule_pfcwd_disabled,
        ),
        Rule(
            "pfcwd-invalid",
            "error",
            "PFC watchdog action/times outside the YANG ranges (pfcwd-action: warning for forward/alert)",
            rule_pfcwd_invalid,
        ),
        Rule(
            "mtu-mismatch",
            "error",
            "MTU differs across a link (mtu-too-small: warning below 4200 B on lossless ports)",
            rule_mtu_mismatch,
        ),
        Rule(
            "buffer-pool-oversubscribed",
            "error",
            "reserved buffers exceed a pool, or the shared headroom pool fills it",
            rule_buffer_pool_oversubscribed,
        ),
        Rule("checks-skipped", "info", "tables absent from the given files", rule_checks_skipped),
    ]
}


# Rule ids a rule function may emit besides its own (documented in the README, "aifabric audit").
EXTRA_IDS = {
    "pfcwd-partial": "warning",
    "pfcwd-not-configured": "warning",
    "pfcwd-action": "warning",
    "mtu-too-small": "warning",
    "pfc-deadlock-cycle": "error",
}


def run_rules(fab: Fabric, only: list[str] | None = None) -> list[Finding]:
    out: list[Finding] = []
    for rid, rule in RULES.items():
        if only is None or rid in only:
            out.extend(rule.fn(fab))
    # one root cause, one finding: the fleet-wide rule carries more evidence than the per-switch one
    seen = {(f.rule, f.device, f.object) for f in out}
    out = [
        f for f in out if not any((sup, f.device, f.object) in seen for sup in SUPERSEDED_BY.get(f.rule, ()))
    ]
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(out, key=lambda f: (order[f.severity], f.device, f.rule, f.object))


# rule → rules whose finding on the same device and object makes it redundant
SUPERSEDED_BY = {
    "fleet-inconsistent": ("pfc-priority-mismatch", "pfc-priority-port-mismatch", "pfc-off-on-headroom-pg"),
    "pfc-priority-port-mismatch": ("pfc-priority-mismatch", "pfc-off-on-headroom-pg"),
    "dscp-lossless-some-ports": ("qos-map-inconsistent", "roce-dscp-lossy", "lossless-dscp-lossy-at-peer"),
}
