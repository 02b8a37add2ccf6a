"""Hardware: the parts catalog (switches, NICs, optics, cables, GPUs), every record with a source,
date and confidence (package data in ``aifabric/data``)."""
