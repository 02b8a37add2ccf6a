"""Scheduler topology of a built fabric: Slurm ``topology.conf`` (tree and block plugins) and
Kubernetes node labels.

Syntax (Slurm topology.conf(5), https://slurm.schedmd.com/topology.conf.html): tree plugin lines
``SwitchName=<name> [Switches=<hostlist>] [Nodes=<hostlist>] [LinkSpeed=<n>]`` (every switch has
child switches or nodes, every node sits under a switch); block plugin lines
``BlockName=<name> Nodes=<hostlist>`` and an optional ``BlockSizes=<n>[,<n>...]`` line. ``#``
starts a comment. Names use Slurm hostlist expressions.

In a rail-optimised fabric a server has one NIC on each rail leaf of its scalable unit (SU), so
the tree plugin's "leaf" is the SU: ``SwitchName=su01`` stands for its rail leaves (named in a
comment); jobs inside an SU keep every rail's traffic on one leaf. Above it: ``spines`` (2 tiers)
or one switch per pod and ``cores`` (3 tiers); a one-switch fabric has one leaf. The block plugin
file is written for NVLink domains larger than a server (GB200/GB300 NVL72: one block per rack of
18 trays), as NVIDIA's and SchedMD's guidance for NVL72 scheduling use it.

Kubernetes labels follow NVIDIA topograph's keys (github.com/NVIDIA/topograph docs/k8s.md):
``network.topology.nvidia.com/accelerator`` (NVLink domain), ``/block`` (the switches a node
connects to directly: its SU's leaves), ``/spine`` and ``/datacenter`` (the tiers above).
"""

from __future__ import annotations

from aifabric.build import names

LABEL_PREFIX = "network.topology.nvidia.com/"


def su_name(su: int) -> str:
    return f"su{su + 1:02d}"


def _servers_by_su(built) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name, x in built.devices.items():
        if x["role"] == "server":
            out.setdefault(x["su"], []).append(name)
    return {k: sorted(v, key=lambda s: built.devices[s]["node"]) for k, v in sorted(out.items())}


def _leaves_by_su(built) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name, x in built.devices.items():
        if x["role"] == "leaf":
            out.setdefault(x.get("su", 0), []).append(name)
    return out


def _pod_of_su(built) -> dict[int, int]:
    d = built.plan.design
    return {s: s // max(1, d.sus_per_pod) for s in range(d.sus)} if d.tiers == 3 else {}


def slurm_tree(built) -> str:
    """topology.conf for the tree plugin."""
    d = built.plan.design
    speed = f" LinkSpeed={int(built.plan.link_rate_gbps)}"
    lines = [
        "# Slurm topology.conf (TopologyPlugin=topology/tree) written by aifabric plan --build",
        f"# {built.plan.gpus} GPUs, {d.nodes} servers, {d.tiers} switch tier(s), {built.plan.planes} plane(s).",
        "# Each suNN is one scalable unit: its servers share every rail leaf listed in the comment.",
        "# LinkSpeed is the per-port rate in Gb/s (relative; Slurm uses it only to compare links).",
    ]
    by_su = _servers_by_su(built)
    leaves = _leaves_by_su(built)
    for su, servers in by_su.items():
        lines.append(f"# {su_name(su)}: {', '.join(sorted(leaves.get(su, [])))}")
        lines.append(f"SwitchName={su_name(su)} Nodes={names.hostlist(servers)}{speed}")
    if d.tiers == 2:
        lines.append(f"SwitchName=spines Switches={names.hostlist([su_name(s) for s in by_su])}{speed}")
    elif d.tiers == 3:
        pods: dict[int, list[str]] = {}
        for su, pod in _pod_of_su(built).items():
            pods.setdefault(pod, []).append(su_name(su))
        for pod, sus in sorted(pods.items()):
            lines.append(f"SwitchName=pod{pod + 1} Switches={names.hostlist(sus)}{speed}")
        lines.append(f"SwitchName=cores Switches={names.hostlist([f'pod{p + 1}' for p in pods])}{speed}")
    return "\n".join(lines) + "\n"


def nvlink_domains(built, catalog) -> dict[str, list[str]] | None:
    """NVLink domain name → servers, when the GPU system's domain is larger than one server."""
    gpu = catalog.get("gpu", built.plan.gpu)
    g = built.plan.design.gpus_per_node
    if not gpu.scale_up_gpus or gpu.scale_up_gpus <= g:
        return None
    per = int(gpu.scale_up_gpus // g)
    servers = sorted(
        (n for n, x in built.devices.items() if x["role"] == "server"), key=lambda s: built.devices[s]["node"]
    )
    return {f"nvl{i // per + 1:03d}": servers[i : i + per] for i in range(0, len(servers), per)}


def slurm_block(domains: dict[str, list[str]], per_domain: int) -> str:
    """topology.conf for the block plugin: one block per NVLink domain."""
    lines = [
        "# Slurm topology.conf (TopologyPlugin=topology/block) written by aifabric plan --build",
        "# One block per NVLink domain; BlockSizes lists the base block size first.",
    ]
    for name, servers in domains.items():
        lines.append(f"BlockName={name} Nodes={names.hostlist(servers)}")
    lines.append(f"BlockSizes={per_domain}")
    return "\n".join(lines) + "\n"


def k8s_labels(built, domains: dict[str, list[str]] | None) -> dict[str, dict[str, str]]:
    """Kubernetes node name → topology labels (topograph keys)."""
    d = built.plan.design
    pods = _pod_of_su(built)
    nvl = {s: dom for dom, ss in (domains or {}).items() for s in ss}
    out = {}
    for name, x in sorted(built.devices.items()):
        if x["role"] != "server":
            continue
        labels = {}
        if name in nvl:
            labels[LABEL_PREFIX + "accelerator"] = nvl[name]
        labels[LABEL_PREFIX + "block"] = su_name(x["su"])
        if d.tiers == 2:
            labels[LABEL_PREFIX + "spine"] = "spines"
        elif d.tiers == 3:
            labels[LABEL_PREFIX + "spine"] = f"pod{pods[x['su']] + 1}"
            labels[LABEL_PREFIX + "datacenter"] = "cores"
        out[name] = labels
    return out


def k8s_script(labels: dict[str, dict[str, str]]) -> str:
    lines = ["#!/bin/sh", "# kubectl label commands written by aifabric plan --build", "set -e"]
    for node, lab in labels.items():
        kv = " ".join(f"{k}={v}" for k, v in lab.items())
        lines.append(f"kubectl label node {node} --overwrite {kv}")
    return "\n".join(lines) + "\n"
